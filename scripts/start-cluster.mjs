#!/usr/bin/env node
// npm run start:cluster: the sample app as a fleet. Builds once (like `npm start`), then starts several
// instances of the sample on consecutive ports (PORT or 3000, +1, +2) that share one Redis: REDIS_URL when
// set, else a redis-server this script starts on a free loopback port (temporary dir, no persistence) and
// stops at the end. Every line an instance prints is prefixed with its port. Once all are up it prints the
// dashboards and how to sign in. Ctrl-C / SIGTERM stops every process it started and exits 0; an instance
// that dies during start-up stops the others and the script exits 1 with that instance's output.
//
// Options: --no-build (run what is built), --entry <file> (SAMPLE_ENTRY; default dist/sample-app/main.js),
// --instances <n> (CLUSTER_INSTANCES; default 3). Environment: PORT, HOST, REDIS_URL, REDIS_KEY_PREFIX,
// REDIS_SERVER_BIN, ADMIN_TOKEN (generated when unset), CLUSTER_START_TIMEOUT_MS (default 120000); every
// other variable is passed on to the instances. See docs/sample-app.md, "Fleet".
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const STOP_GRACE_MS = 10_000;
const OUTPUT_KEPT = 200;

/**
 * The safety net for `kill -9` of this script: a separate process that reads the pids this script
 * starts from its stdin and, when that pipe closes (this script is gone, however it ended), stops those
 * that still run: SIGTERM, then SIGKILL after the grace period.
 */
function reaper() {
  const pids = new Set();
  let buffered = '';
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, () => {});
  process.stdin.setEncoding('utf8');
  process.stdin.on('data', (chunk) => {
    buffered += chunk;
    const lines = buffered.split('\n');
    buffered = lines.pop();
    for (const line of lines) {
      const [verb, pid] = line.trim().split(' ');
      if (verb === 'add') pids.add(Number(pid));
      if (verb === 'done') pids.delete(Number(pid));
    }
  });
  process.stdin.on('close', () => {
    const alive = () => [...pids].filter(isAlive);
    for (const pid of alive()) signalGroup(pid, 'SIGTERM');
    const deadline = Date.now() + STOP_GRACE_MS;
    const check = setInterval(() => {
      const left = alive();
      if (left.length === 0 || Date.now() > deadline) {
        for (const pid of left) signalGroup(pid, 'SIGKILL');
        clearInterval(check);
        process.exit(0);
      }
    }, 100);
  });
}

function isAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Signals a child started with `detached: true` (it leads its own process group) and whatever it started. */
function signalGroup(pid, signal) {
  try {
    process.kill(-pid, signal);
  } catch {
    try {
      process.kill(pid, signal);
    } catch {
      // already gone
    }
  }
}

function usage(problem) {
  if (problem) process.stderr.write(`start-cluster: ${problem}\n`);
  process.stderr.write(
    'usage: node scripts/start-cluster.mjs [--no-build] [--entry <file>] [--instances <n>]\n' +
      '  env: PORT (first port, default 3000), HOST, REDIS_URL, REDIS_KEY_PREFIX, REDIS_SERVER_BIN, ADMIN_TOKEN,\n' +
      '       SAMPLE_ENTRY, CLUSTER_INSTANCES, CLUSTER_START_TIMEOUT_MS\n',
  );
  process.exit(problem ? 2 : 0);
}

function parseArguments(argv, env) {
  const options = {
    build: true,
    entry: env.SAMPLE_ENTRY || join(ROOT, 'dist', 'sample-app', 'main.js'),
    instances: env.CLUSTER_INSTANCES || '3',
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = () => {
      const next = argv[++i];
      if (next === undefined) usage(`${arg} needs a value`);
      return next;
    };
    if (arg === '--no-build') options.build = false;
    else if (arg === '--entry') options.entry = value();
    else if (arg.startsWith('--entry=')) options.entry = arg.slice('--entry='.length);
    else if (arg === '--instances') options.instances = value();
    else if (arg.startsWith('--instances=')) options.instances = arg.slice('--instances='.length);
    else if (arg === '--help' || arg === '-h') usage();
    else usage(`unknown argument ${arg}`);
  }
  const problems = [];
  const instances = Number(options.instances);
  if (!/^\d+$/.test(String(options.instances)) || instances < 1 || instances > 16) {
    problems.push(`instances: ${options.instances} (must be a whole number from 1 to 16)`);
  }
  const port = Number(env.PORT ?? 3000);
  if (!/^\d+$/.test(String(env.PORT ?? 3000)) || port < 1 || port + instances - 1 > 65535) {
    problems.push(`PORT: ${env.PORT} (must be a port number; the last instance listens on PORT + ${instances - 1})`);
  }
  const timeout = Number(env.CLUSTER_START_TIMEOUT_MS ?? 120_000);
  if (!Number.isInteger(timeout) || timeout < 1) {
    problems.push(`CLUSTER_START_TIMEOUT_MS: ${env.CLUSTER_START_TIMEOUT_MS} (must be a whole number >= 1)`);
  }
  if (env.ADMIN_TOKEN && env.ADMIN_TOKEN.length < 16) problems.push('ADMIN_TOKEN: must be at least 16 characters');
  if (problems.length > 0) usage(`invalid settings:\n  ${problems.join('\n  ')}`);
  const entry = isAbsolute(options.entry) ? options.entry : resolve(process.cwd(), options.entry);
  return { build: options.build, entry, instances, port, timeout, host: env.HOST || '127.0.0.1' };
}

function freePort() {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolvePort(port));
    });
  });
}

/** Whether something already listens on host:port (then that instance could not start). */
function portInUse(host, port) {
  return new Promise((resolveUse) => {
    const server = createServer();
    server.once('error', () => resolveUse(true));
    server.listen(port, host, () => server.close(() => resolveUse(false)));
  });
}

function findRedisServer(env) {
  for (const candidate of [env.REDIS_SERVER_BIN, 'redis-server', '/usr/bin/redis-server']) {
    if (!candidate) continue;
    try {
      execFileSync(candidate, ['--version'], { stdio: 'ignore' });
      return candidate;
    } catch {
      // try the next one
    }
  }
  return undefined;
}

/** Splits a stream into lines; calls `onLine` for each complete one (and the rest at the end). */
function eachLine(stream, onLine) {
  let rest = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk) => {
    rest += chunk;
    const lines = rest.split('\n');
    rest = lines.pop();
    for (const line of lines) onLine(line.replace(/\r$/, ''));
  });
  stream.on('end', () => {
    if (rest) onLine(rest);
    rest = '';
  });
}

/** A process this script started, with the tail of its output. */
class Child {
  constructor(label, command, args, options, { echo }) {
    this.label = label;
    this.output = [];
    // Its own process group: Ctrl-C reaches this script only, which then stops the children in order.
    this.process = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    this.pid = this.process.pid;
    this.exited = new Promise((resolveExit) => {
      this.process.once('error', (error) => {
        this.keep(`could not start: ${error.message}`);
        resolveExit({ code: null, signal: null, error });
      });
      this.process.once('close', (code, signal) => resolveExit({ code, signal }));
    });
    this.done = false;
    void this.exited.then(() => (this.done = true));
    const onLine = (stream) => (line) => {
      this.keep(line);
      if (echo) stream.write(`[${label}] ${line}\n`);
    };
    eachLine(this.process.stdout, onLine(process.stdout));
    eachLine(this.process.stderr, onLine(process.stderr));
  }

  keep(line) {
    this.output.push(line);
    if (this.output.length > OUTPUT_KEPT) this.output.shift();
  }

  /** SIGTERM, then SIGKILL if it has not exited after the grace period. */
  async stop() {
    if (this.done || this.pid === undefined) return this.exited;
    signalGroup(this.pid, 'SIGTERM');
    let timer;
    const killed = new Promise((resolveKill) => {
      timer = setTimeout(() => {
        signalGroup(this.pid, 'SIGKILL');
        resolveKill();
      }, STOP_GRACE_MS);
    });
    await Promise.race([this.exited, killed]);
    clearTimeout(timer);
    return this.exited;
  }
}

function describeExit({ code, signal, error }) {
  if (error) return error.message;
  return signal ? `signal ${signal}` : `exit code ${code}`;
}

async function startRedis(env, reap, children) {
  const bin = findRedisServer(env);
  if (!bin) {
    throw new Error(
      'REDIS_URL is not set and redis-server is not installed: install it (apt-get install redis-server) or set REDIS_URL.',
    );
  }
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'nest-resilience-cluster-redis-'));
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir];
  const redis = new Child('redis', bin, args, {}, { echo: false });
  children.redis = redis;
  redis.dir = dir;
  reap(redis);
  await new Promise((resolveReady, reject) => {
    const timer = setTimeout(() => reject(new Error('redis-server did not start within 10 s')), 10_000);
    const poll = setInterval(() => {
      if (redis.output.some((line) => line.includes('Ready to accept connections'))) {
        clearInterval(poll);
        clearTimeout(timer);
        resolveReady();
      }
    }, 25);
    void redis.exited.then((exit) => {
      clearInterval(poll);
      clearTimeout(timer);
      reject(new Error(`redis-server stopped during start-up (${describeExit(exit)})`));
    });
  }).catch((error) => {
    throw new Error(`${error.message}:\n${redis.output.join('\n')}`);
  });
  return `redis://127.0.0.1:${port}`;
}

/** Polls until the instance answers HTTP (any status: /health is 503 while a circuit is open). */
function answers(host, port) {
  return new Promise((resolveAnswer) => {
    const socket = createConnection({ host, port });
    socket.setTimeout(1_000);
    socket.once('connect', () => {
      socket.write(`GET /health HTTP/1.1\r\nHost: ${host}:${port}\r\nConnection: close\r\n\r\n`);
    });
    let reply = '';
    socket.on('data', (chunk) => (reply += chunk));
    const finish = () => {
      socket.destroy();
      resolveAnswer(reply.startsWith('HTTP/1.1 '));
    };
    socket.once('end', finish);
    socket.once('timeout', finish);
    socket.once('error', finish);
  });
}

async function main() {
  const options = parseArguments(process.argv.slice(2), process.env);
  const children = { build: undefined, redis: undefined, instances: [] };
  let stopping;
  let ready = false;

  // The safety net: stops what is still running if this script is killed without a chance to clean up.
  const reaperProcess = spawn(process.execPath, [fileURLToPath(import.meta.url), '--reap', String(process.pid)], {
    stdio: ['pipe', 'ignore', 'inherit'],
    detached: true,
  });
  reaperProcess.stdin.on('error', () => {});
  // Each pid is handed over while its process runs, and taken back once it has exited (a pid can be reused).
  const reap = (child) => {
    if (child.pid === undefined) return;
    reaperProcess.stdin.write(`add ${child.pid}\n`);
    void child.exited.then(() => reaperProcess.stdin.writable && reaperProcess.stdin.write(`done ${child.pid}\n`));
  };

  const stopAll = async () => {
    children.build?.kill('SIGTERM');
    await Promise.all(children.instances.map((child) => child.stop()));
    if (children.redis) {
      await children.redis.stop();
      rmSync(children.redis.dir, { recursive: true, force: true });
    }
    reaperProcess.stdin.end();
    await new Promise((resolveExit) =>
      reaperProcess.exitCode !== null || reaperProcess.signalCode !== null
        ? resolveExit()
        : reaperProcess.once('exit', resolveExit),
    );
  };
  const shutdown = (code, message) => {
    stopping ??= (async () => {
      if (message) process.stderr.write(message);
      await stopAll();
      process.stdout.write(`start-cluster: stopped (exit ${code})\n`);
      process.exit(code);
    })();
    return stopping;
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.on(signal, () => {
      if (stopping) return;
      process.stdout.write(
        `\nstart-cluster: ${signal}, stopping every instance${children.redis ? ' and Redis' : ''}…\n`,
      );
      void shutdown(0);
    });
  }

  try {
    if (options.build) {
      process.stdout.write('start-cluster: building (npm run build)…\n');
      children.build = spawn('npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit' });
      const code = await new Promise((resolveBuild) => {
        children.build.once('error', () => resolveBuild(1));
        children.build.once('exit', (exitCode) => resolveBuild(exitCode ?? 1));
      });
      children.build = undefined;
      if (stopping) return;
      if (code !== 0) return shutdown(1, `start-cluster: the build failed (exit code ${code})\n`);
    }

    const ports = Array.from({ length: options.instances }, (_, i) => options.port + i);
    const busy = [];
    for (const port of ports) if (await portInUse(options.host, port)) busy.push(port);
    if (busy.length > 0) {
      return shutdown(
        1,
        `start-cluster: port${busy.length > 1 ? 's' : ''} ${busy.join(', ')} already in use on ${options.host}; ` +
          `stop what listens there or start at another PORT.\n`,
      );
    }

    const ownRedis = !process.env.REDIS_URL;
    const redisUrl = process.env.REDIS_URL || (await startRedis(process.env, reap, children));
    if (stopping) return;
    if (ownRedis) {
      process.stdout.write(`start-cluster: started redis-server (pid ${children.redis.pid}) on ${redisUrl}\n`);
    }
    const generatedToken = !process.env.ADMIN_TOKEN;
    const adminToken = process.env.ADMIN_TOKEN || randomBytes(24).toString('base64url');

    for (const port of ports) {
      const rpcPort = await freePort();
      if (stopping) return;
      const env = {
        ...process.env,
        PORT: String(port),
        HOST: options.host,
        // Each instance needs its own TCP port for the weather RPC service (default 3001 = the next app's
        // port); the built-in identity provider and the upstreams already take free ports of their own.
        RPC_PORT: String(rpcPort),
        REDIS_URL: redisUrl,
        ADMIN_TOKEN: adminToken,
      };
      // One value cannot fit every instance: each derives them from its own port.
      delete env.APP_URL;
      delete env.OIDC_PORT;
      const child = new Child(String(port), process.execPath, [options.entry], { cwd: ROOT, env }, { echo: true });
      child.port = port;
      child.rpcPort = env.RPC_PORT;
      children.instances.push(child);
      reap(child);
    }

    const failure = new Promise((resolveFailure) => {
      for (const child of children.instances) {
        void child.exited.then((exit) => {
          if (!ready) resolveFailure({ child, exit });
          else if (!stopping) {
            process.stderr.write(`start-cluster: the instance on port ${child.port} stopped (${describeExit(exit)})\n`);
            if (children.instances.every((c) => c.done)) {
              void shutdown(1, 'start-cluster: every instance has stopped\n');
            }
          }
        });
      }
    });
    const up = (async () => {
      const deadline = Date.now() + options.timeout;
      const pending = new Set(children.instances);
      while (pending.size > 0 && !stopping) {
        if (Date.now() > deadline) return false;
        for (const child of [...pending]) {
          if (!child.done && (await answers(options.host, child.port))) pending.delete(child);
        }
        if (pending.size > 0) await new Promise((r) => setTimeout(r, 200));
      }
      return true;
    })();
    const outcome = await Promise.race([up, failure]);
    if (stopping) return;
    if (outcome === false) {
      const late = children.instances.filter((c) => !c.done).map((c) => c.port);
      return shutdown(1, `start-cluster: no answer within ${options.timeout} ms from port ${late.join(', ')}\n`);
    }
    if (outcome !== true) {
      const { child, exit } = outcome;
      return shutdown(
        1,
        `\nstart-cluster: the instance on port ${child.port} stopped during start-up (${describeExit(exit)}); ` +
          `stopping the others. Its output:\n${child.output.map((line) => `  ${line}`).join('\n')}\n`,
      );
    }
    ready = true;
    const url = (port, path) => `http://${options.host === '0.0.0.0' ? '127.0.0.1' : options.host}:${port}${path}`;
    const [first, second] = ports;
    const lines = [
      '',
      `Fleet ready: ${ports.length} instance${ports.length > 1 ? 's' : ''} sharing ${redisUrl}` +
        `${ownRedis ? ` (redis-server pid ${children.redis.pid}, stopped with the fleet)` : ''}` +
        `, key prefix ${process.env.REDIS_KEY_PREFIX || 'nest-resilience-sample'}`,
      '',
      ...children.instances.map(
        (c) => `  [${c.port}] ${url(c.port, '/resilience/dashboard')}   (pid ${c.pid}, RPC port ${c.rpcPort})`,
      ),
      '',
      'Sign in on any dashboard (any user name works): the session lives in Redis, so every instance',
      'sees you signed in. Or call the admin API of any instance with the admin token:',
      '',
      generatedToken
        ? `  export ADMIN_TOKEN=${adminToken}   # generated for this run`
        : '  ADMIN_TOKEN: the one from your environment',
      `  curl -H "Authorization: Bearer $ADMIN_TOKEN" ${url(second ?? first, '/resilience/circuits')}`,
      '',
      `One circuit fleet-wide: on ${url(first, '/resilience/dashboard')} switch the weather upstream to`,
      `"outage", call ${url(first, '/weather/lisbon/strict')} twice, and watch the weather circuit open on`,
      `every dashboard (and every /health turn 503). Ctrl-C stops the fleet.`,
      '',
    ];
    process.stdout.write(`${lines.join('\n')}\n`);
  } catch (error) {
    return shutdown(1, `start-cluster: ${error instanceof Error ? error.message : String(error)}\n`);
  }
}

if (process.argv[2] === '--reap') {
  reaper();
} else {
  await main();
}
