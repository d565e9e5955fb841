import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Transport, type ClientOptions, type MicroserviceOptions } from '@nestjs/microservices';

/** A loopback port nothing listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Resolves once something accepts connections on the port (bounded). */
export async function waitForPort(port: number, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    if (Date.now() > deadline) throw new Error(`nothing listens on 127.0.0.1:${port}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A broker process started for a test file, stopped (and awaited) by `stop`. */
export interface Broker {
  readonly port: number;
  stop(): Promise<void>;
  /** Kills the broker process at once (SIGKILL: no goodbye to its clients) and waits until it is gone. */
  kill(): Promise<void>;
  /** Starts the killed broker again on the same port; resolves once it accepts connections. */
  restart(): Promise<void>;
}

async function spawnBroker(command: string, args: string[], port: number, cleanup?: () => void): Promise<Broker> {
  let child: ChildProcess;
  let exited: Promise<void>;
  const running = () => child.exitCode === null && child.signalCode === null;
  const launch = async () => {
    child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let output = '';
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const current = child;
    exited = new Promise<void>((resolve) => current.once('exit', () => resolve()));
    try {
      await Promise.race([
        waitForPort(port),
        exited.then(() => {
          throw new Error(`${command} exited: ${output}`);
        }),
      ]);
    } catch (error) {
      current.kill('SIGKILL');
      await exited;
      throw error;
    }
  };
  const end = async (signal: NodeJS.Signals) => {
    if (running()) child.kill(signal);
    await exited;
    child.stderr!.destroy();
  };
  try {
    await launch();
  } catch (error) {
    cleanup?.();
    throw error;
  }
  return {
    port,
    async stop() {
      await end('SIGTERM');
      cleanup?.();
    },
    kill: () => end('SIGKILL'),
    async restart() {
      if (running()) throw new Error(`${command} on port ${port} is still running`);
      await launch();
    },
  };
}

/** A redis-server of its own on a free loopback port (its pub/sub traffic stays off the shared one). */
export async function startRedis(): Promise<Broker> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'nest-resilience-rpc-redis-'));
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir];
  return spawnBroker(process.env.REDIS_SERVER_BIN ?? 'redis-server', args, port, () =>
    rmSync(dir, { recursive: true, force: true }),
  );
}

/** Debian's nats-server on a free loopback port. */
export async function startNats(): Promise<Broker> {
  const port = await freePort();
  return spawnBroker(
    process.env.NATS_SERVER_BIN ?? '/usr/sbin/nats-server',
    ['-a', '127.0.0.1', '-p', String(port)],
    port,
  );
}

/** Debian's mosquitto on a free loopback port (anonymous, no persistence). */
export async function startMosquitto(): Promise<Broker> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'nest-resilience-mqtt-'));
  const config = join(dir, 'mosquitto.conf');
  writeFileSync(config, `listener ${port} 127.0.0.1\nallow_anonymous true\npersistence false\n`);
  return spawnBroker(process.env.MOSQUITTO_BIN ?? '/usr/sbin/mosquitto', ['-c', config], port, () =>
    rmSync(dir, { recursive: true, force: true }),
  );
}

/** `count` distinct free loopback ports. */
async function freePorts(count: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < count) ports.add(await freePort());
  return [...ports];
}

/**
 * A process started in a process group of its own (detached), so SIGKILL to the group reaches whatever it
 * forked that stayed in the group. `exited` resolves once the process itself is gone.
 */
interface GroupProcess {
  readonly exited: Promise<void>;
  /** The last few kilobytes it wrote to stdout and stderr. */
  output(): string;
  /** SIGKILL to the whole group (if still running), then waits for the process to exit. */
  kill(): Promise<void>;
}

function spawnGroup(command: string, args: string[], env: NodeJS.ProcessEnv, cwd: string): GroupProcess {
  const child = spawn(command, args, { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const keep = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-4_000));
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  // Should the test process end first, the group must not outlive it.
  const orphaned = () => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
    } catch {
      // the group is gone already
    }
  };
  process.once('exit', orphaned);
  const exited = new Promise<void>((resolve) => {
    child.once('error', (error) => {
      keep(Buffer.from(String(error)));
      resolve();
    });
    child.once('exit', () => resolve());
  }).finally(() => process.removeListener('exit', orphaned));
  return {
    exited,
    output: () => output,
    async kill() {
      if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) {
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch {
          // the group is gone already
        }
      }
      await exited;
      child.stdout.destroy();
      child.stderr.destroy();
    },
  };
}

/** Resolves once the port accepts connections; rejects if the process exits first or the time is up. */
async function waitForGroup(what: string, group: GroupProcess, port: number, timeoutMs: number): Promise<void> {
  await Promise.race([
    waitForPort(port, timeoutMs),
    group.exited.then(() => {
      throw new Error(`${what} exited: ${group.output()}`);
    }),
  ]);
}

/** How long a RabbitMQ node may take to boot (Erlang VM, Mnesia, the AMQP listener last). */
export const RABBITMQ_BOOT_TIMEOUT = 60_000;

/**
 * Debian's rabbitmq-server as a node of its own: a random node name, the AMQP listener, the Erlang
 * distribution and an epmd of its own on free loopback ports, its Mnesia, logs, config and (no) plugins in
 * a temporary directory. The node runs in the foreground (`RABBITMQ_ALLOW_INPUT`: the script execs the VM
 * instead of forking it, `-noinput` still closes the shell) in a process group of its own, and so does its
 * epmd (started here instead of by the VM, which would daemonize it out of reach). `kill` SIGKILLs both;
 * `restart` starts both again on the same ports with the same node name and Mnesia directory.
 */
export async function startRabbitMq(): Promise<Broker> {
  const [port, distPort, epmdPort] = await freePorts(3);
  const dir = mkdtempSync(join(tmpdir(), 'nest-resilience-rmq-'));
  const config = join(dir, 'rabbitmq.conf');
  const plugins = join(dir, 'enabled_plugins');
  writeFileSync(config, `listeners.tcp.default = 127.0.0.1:${port}\n`);
  writeFileSync(plugins, '');
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOME: dir, // its .erlang.cookie
    RABBITMQ_NODENAME: `rabbit-${randomBytes(6).toString('hex')}@localhost`,
    RABBITMQ_NODE_IP_ADDRESS: '127.0.0.1',
    RABBITMQ_NODE_PORT: String(port),
    RABBITMQ_DIST_PORT: String(distPort),
    ERL_EPMD_PORT: String(epmdPort),
    ERL_EPMD_ADDRESS: '127.0.0.1',
    RABBITMQ_MNESIA_BASE: join(dir, 'mnesia'),
    RABBITMQ_LOG_BASE: join(dir, 'log'),
    RABBITMQ_PID_FILE: join(dir, 'rabbitmq.pid'),
    RABBITMQ_CONFIG_FILE: config,
    RABBITMQ_ADVANCED_CONFIG_FILE: join(dir, 'advanced.config'),
    RABBITMQ_ENABLED_PLUGINS_FILE: plugins,
    RABBITMQ_ALLOW_INPUT: 'true',
    RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS: '-noinput -start_epmd false -kernel inet_dist_use_interface {127,0,0,1}',
  };
  const server = process.env.RABBITMQ_SERVER_BIN ?? '/usr/lib/rabbitmq/bin/rabbitmq-server';
  const epmd = process.env.EPMD_BIN ?? 'epmd';
  let processes: GroupProcess[] = [];
  const killAll = async () => {
    await Promise.all(processes.map((p) => p.kill()));
    processes = [];
  };
  const launch = async () => {
    try {
      const epmdProcess = spawnGroup(epmd, ['-port', String(epmdPort), '-address', '127.0.0.1'], env, dir);
      processes.push(epmdProcess);
      await waitForGroup('epmd', epmdProcess, epmdPort, 10_000);
      const node = spawnGroup(server, [], env, dir);
      processes.push(node);
      await waitForGroup('rabbitmq-server', node, port, RABBITMQ_BOOT_TIMEOUT);
    } catch (error) {
      await killAll();
      throw error;
    }
  };
  const cleanup = () => rmSync(dir, { recursive: true, force: true });
  try {
    await launch();
  } catch (error) {
    cleanup();
    throw error;
  }
  return {
    port,
    async stop() {
      await killAll();
      cleanup();
    },
    kill: killAll,
    async restart() {
      if (processes.length > 0) throw new Error(`rabbitmq-server on port ${port} is still running`);
      await launch();
    },
  };
}

/** One transport under test: how servers listen and clients connect, and an address nothing serves. */
export interface TransportUnderTest {
  readonly name: string;
  setUp(): Promise<void>;
  tearDown(): Promise<void>;
  server(): MicroserviceOptions;
  client(): ClientOptions;
  /** A client of a broker (or server) that is not there: every call fails as a transport failure. */
  deadClient(deadPort: number): ClientOptions;
}

export function tcpTransport(): TransportUnderTest {
  let port = 0;
  return {
    name: 'TCP',
    async setUp() {
      port = await freePort();
    },
    async tearDown() {},
    server: () => ({ transport: Transport.TCP, options: { host: '127.0.0.1', port } }),
    client: () => ({ transport: Transport.TCP, options: { host: '127.0.0.1', port } }),
    deadClient: (dead) => ({ transport: Transport.TCP, options: { host: '127.0.0.1', port: dead } }),
  };
}

export function redisTransport(): TransportUnderTest {
  let broker: Broker | undefined;
  const address = () => ({ host: '127.0.0.1', port: broker!.port });
  return {
    name: 'Redis',
    async setUp() {
      broker = await startRedis();
    },
    async tearDown() {
      await broker?.stop();
    },
    server: () => ({ transport: Transport.REDIS, options: address() }),
    client: () => ({ transport: Transport.REDIS, options: address() }),
    deadClient: (dead) => ({ transport: Transport.REDIS, options: { host: '127.0.0.1', port: dead } }),
  };
}

export function natsTransport(): TransportUnderTest {
  let broker: Broker | undefined;
  const url = () => `nats://127.0.0.1:${broker!.port}`;
  return {
    name: 'NATS',
    async setUp() {
      broker = await startNats();
    },
    async tearDown() {
      await broker?.stop();
    },
    server: () => ({ transport: Transport.NATS, options: { servers: [url()] } }),
    client: () => ({ transport: Transport.NATS, options: { servers: [url()] } }),
    deadClient: (dead) => ({ transport: Transport.NATS, options: { servers: [`nats://127.0.0.1:${dead}`] } }),
  };
}

export function mqttTransport(): TransportUnderTest {
  let broker: Broker | undefined;
  const url = () => `mqtt://127.0.0.1:${broker!.port}`;
  return {
    name: 'MQTT',
    async setUp() {
      broker = await startMosquitto();
    },
    async tearDown() {
      await broker?.stop();
    },
    server: () => ({ transport: Transport.MQTT, options: { url: url() } }),
    client: () => ({ transport: Transport.MQTT, options: { url: url() } }),
    // A client of a port where no broker ever ran: it must fail at once, not reconnect forever. A broker
    // killed under a client with default reconnects is test/microservices/broker-outage.e2e-spec.ts.
    deadClient: (dead) => ({
      transport: Transport.MQTT,
      options: { url: `mqtt://127.0.0.1:${dead}`, reconnectPeriod: 0 },
    }),
  };
}

/** Waits, turning the event loop (real time, bounded), until `condition` holds. */
export async function waitUntil(condition: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 2));
  }
}
