import { Cluster, Redis } from 'ioredis';
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ResiliencePipelineBuilder } from '../src/index.js';
import { RedisCircuitBreakerStateStore } from '../src/redis/index.js';

/**
 * The closed-circuit success path through the Redis store on loopback, on one redis-server and on a
 * 3-primary Redis Cluster: calls/s for 1 and 3 instances (each its own connection and store, one shared
 * circuit), with and without the local read-through cache, and the Redis round trips (commands sent) per
 * call. Each success carries the time it happened. Needs Debian's redis-server (and redis-cli for the
 * cluster); skipped without them.
 */
const CALLS_PER_INSTANCE = 20_000;
const CONCURRENCY = 32;
const HOST = '127.0.0.1';

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, HOST, () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

function installed(bin: string): boolean {
  try {
    execFileSync(bin, ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

async function until(check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error('Redis did not become ready');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

async function ping(port: number, ...command: string[]): Promise<string> {
  const client = new Redis({ host: HOST, port, lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return String(await client.call(command[0] ?? 'PING', ...command.slice(1)));
  } finally {
    client.disconnect();
  }
}

interface Deployment {
  readonly label: string;
  connect(): Promise<Redis | Cluster>;
  stop(): void;
}

async function startServer(dir: string, extra: string[] = []): Promise<{ child: ChildProcess; port: number }> {
  const port = await freePort();
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', HOST, '--save', '', '--appendonly', 'no', '--dir', dir, ...extra],
    { stdio: 'ignore' },
  );
  await until(async () => (await ping(port)) === 'PONG');
  return { child, port };
}

async function singleServer(): Promise<Deployment> {
  const dir = mkdtempSync(join(tmpdir(), 'nest-resilience-bench-'));
  const { child, port } = await startServer(dir);
  return {
    label: 'one server',
    connect: async () => {
      const client = new Redis({ host: HOST, port });
      await until(async () => client.status === 'ready');
      return client;
    },
    stop: () => {
      child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function cluster(): Promise<Deployment> {
  const dir = mkdtempSync(join(tmpdir(), 'nest-resilience-bench-cluster-'));
  const nodes: { child: ChildProcess; port: number }[] = [];
  for (let i = 0; i < 3; i++) {
    const busPort = await freePort();
    nodes.push(
      await startServer(dir, [
        '--cluster-enabled',
        'yes',
        '--cluster-port',
        String(busPort),
        '--cluster-config-file',
        join(dir, `nodes-${i}.conf`),
      ]),
    );
  }
  const seeds = nodes.map((n) => `${HOST}:${n.port}`);
  await new Promise<void>((resolve, reject) =>
    execFile('redis-cli', ['--cluster', 'create', ...seeds, '--cluster-replicas', '0', '--cluster-yes'], (error) =>
      error ? reject(error) : resolve(),
    ),
  );
  await until(async () => {
    for (const n of nodes) if (!(await ping(n.port, 'CLUSTER', 'INFO')).includes('cluster_state:ok')) return false;
    return true;
  });
  return {
    label: '3-primary cluster',
    connect: async () => {
      const client = new Cluster(seeds.map((s) => ({ host: HOST, port: Number(s.split(':')[1]) })));
      await until(async () => client.status === 'ready');
      return client;
    },
    stop: () => {
      for (const n of nodes) n.child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function run(
  deployment: Deployment,
  instances: number,
  localCacheTtl: number,
): Promise<{ callsPerSecond: number; roundTripsPerCall: number }> {
  const clients = await Promise.all(Array.from({ length: instances }, () => deployment.connect()));
  let commands = 0;
  const prefix = `bench-${instances}-${localCacheTtl}-${Date.now()}`;
  const pipelines = clients.map((client) => {
    const store = new RedisCircuitBreakerStateStore({ client, keyPrefix: prefix, localCacheTtl });
    const send = client.sendCommand.bind(client) as (...a: unknown[]) => unknown;
    (client as unknown as { sendCommand: unknown }).sendCommand = (...a: unknown[]) => {
      commands++;
      return send(...a);
    };
    return {
      store,
      pipeline: new ResiliencePipelineBuilder()
        .addCircuitBreaker({
          kind: 'time-window',
          failureRatio: 0.5,
          minimumThroughput: 100,
          stateStore: store,
          circuitKey: 'shared',
        })
        .build(),
    };
  });
  // Warm up: connections to the circuit's node, the script loaded.
  await Promise.all(pipelines.map(({ pipeline }) => pipeline.execute(async () => 0)));
  commands = 0;
  const ok = async () => 42;
  const started = process.hrtime.bigint();
  await Promise.all(
    pipelines.map(async ({ pipeline }) => {
      let next = 0;
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          while (next++ < CALLS_PER_INSTANCE) await pipeline.execute(ok);
        }),
      );
    }),
  );
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  await Promise.all(pipelines.map(({ store }) => store.flush()));
  await Promise.all(clients.map((c) => c.quit()));
  const calls = CALLS_PER_INSTANCE * instances;
  return { callsPerSecond: calls / seconds, roundTripsPerCall: commands / calls };
}

export async function redisTable(): Promise<string> {
  if (!installed('redis-server')) return '(redis-server is not installed: the Redis store benchmark was skipped)';
  const lines = [
    `closed circuit (time window), success path, ${CONCURRENCY} concurrent callers per instance, ${CALLS_PER_INSTANCE} calls per instance; every success carries its time`,
    '',
    '| Redis | instances | local cache | calls/s (all instances) | Redis round trips per call |',
    '| :-- | ---: | ---: | ---: | ---: |',
  ];
  const deployments: (() => Promise<Deployment>)[] = [singleServer];
  if (installed('redis-cli')) deployments.push(cluster);
  for (const start of deployments) {
    const deployment = await start();
    try {
      for (const instances of [1, 3]) {
        for (const ttl of [0, 100]) {
          const { callsPerSecond, roundTripsPerCall } = await run(deployment, instances, ttl);
          lines.push(
            `| ${deployment.label} | ${instances} | ${ttl ? `${ttl} ms` : 'off'} | ${callsPerSecond.toFixed(0)} | ${roundTripsPerCall.toFixed(4)} |`,
          );
        }
      }
    } finally {
      deployment.stop();
    }
  }
  return lines.join('\n');
}
