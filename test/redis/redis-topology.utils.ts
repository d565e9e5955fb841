import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';

/*
 * Real Redis deployments for tests, from Debian's redis-server / redis-sentinel / redis-cli (.ci/run
 * installs them): a 3-primary Redis Cluster and a primary + replica + 3 Sentinels, each on free loopback
 * ports in a temporary directory. Readiness is awaited by polling the servers' own state, never by
 * sleeping a fixed time; everything is killed (and the directory removed) by `stop()`.
 */

const HOST = '127.0.0.1';
const SERVER = process.env.REDIS_SERVER_BIN ?? 'redis-server';
const SENTINEL = process.env.REDIS_SENTINEL_BIN ?? 'redis-sentinel';
const CLI = process.env.REDIS_CLI_BIN ?? 'redis-cli';

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, HOST, () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Polls `check` (every 25 ms) until it returns true, or fails after `timeout` ms with `what`. */
export async function waitFor(what: string, check: () => Promise<boolean> | boolean, timeout = 20_000): Promise<void> {
  const deadline = Date.now() + timeout;
  let lastError: unknown;
  for (;;) {
    try {
      if (await check()) return;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `timed out waiting for ${what}${lastError ? ` (last error: ${lastError instanceof Error ? lastError.message : JSON.stringify(lastError)})` : ''}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** One command on a short-lived connection (no retries, no offline queue). */
export async function command(port: number, ...args: (string | number)[]): Promise<unknown> {
  const client = new Redis({
    host: HOST,
    port,
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    connectTimeout: 1_000,
  });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return await client.call(String(args[0]), ...args.slice(1).map(String));
  } finally {
    client.disconnect();
  }
}

export function info(reply: unknown): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const line of String(reply).split(/\r?\n/)) {
    const at = line.indexOf(':');
    if (at > 0) fields[line.slice(0, at)] = line.slice(at + 1).trim();
  }
  return fields;
}

export function runCli(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(CLI, args, { timeout: 30_000 }, (error, stdout, stderr) =>
      error ? reject(new Error(`${CLI} ${args.join(' ')}: ${error.message} ${stderr} ${stdout}`)) : resolve(stdout),
    );
  });
}

/** A redis-server (or sentinel) process of a test. */
export class RedisProcess {
  private child: ChildProcess | undefined;
  private stopped = false;

  constructor(
    readonly port: number,
    private readonly bin: string,
    private readonly args: string[],
  ) {}

  async start(): Promise<void> {
    const child = spawn(this.bin, this.args, { stdio: ['ignore', 'ignore', 'ignore'] });
    this.child = child;
    this.stopped = false;
    const exited = new Promise<never>((_, reject) =>
      child.once('exit', (code) => {
        if (!this.stopped) reject(new Error(`${this.bin} on port ${this.port} exited with ${code}`));
      }),
    );
    exited.catch(() => undefined);
    await Promise.race([
      waitFor(`${this.bin} on port ${this.port}`, async () => (await command(this.port, 'PING')) === 'PONG'),
      exited,
    ]);
  }

  /** SIGSTOP: the server hangs (connections stay open, nothing answers). */
  pause(): void {
    this.child?.kill('SIGSTOP');
  }

  resume(): void {
    this.child?.kill('SIGCONT');
  }

  async kill(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    this.stopped = true;
    await new Promise((resolve) => {
      child.once('exit', resolve);
      child.kill('SIGCONT');
      child.kill('SIGKILL');
    });
  }
}

function serverArgs(port: number, dir: string, extra: string[] = []): string[] {
  return [
    '--port',
    String(port),
    '--bind',
    HOST,
    '--save',
    '',
    '--appendonly',
    'no',
    '--dir',
    dir,
    '--dbfilename',
    `dump-${port}.rdb`,
    '--repl-diskless-sync-delay',
    '0',
    ...extra,
  ];
}

/** A 3-primary Redis Cluster (no replicas), all 16384 slots assigned and agreed on by every node. */
export class TestCluster {
  readonly nodes: RedisProcess[] = [];
  private dir = '';

  get seeds(): string[] {
    return this.nodes.map((n) => `${HOST}:${n.port}`);
  }

  async start(size = 3): Promise<this> {
    this.dir = mkdtempSync(join(tmpdir(), 'nest-resilience-cluster-'));
    for (let i = 0; i < size; i++) {
      const [port, busPort] = [await freePort(), await freePort()];
      const node = new RedisProcess(
        port,
        SERVER,
        serverArgs(port, this.dir, [
          '--cluster-enabled',
          'yes',
          '--cluster-port',
          String(busPort),
          '--cluster-config-file',
          join(this.dir, `nodes-${port}.conf`),
          '--cluster-node-timeout',
          '2000',
          '--cluster-require-full-coverage',
          'no',
        ]),
      );
      this.nodes.push(node);
    }
    await Promise.all(this.nodes.map((n) => n.start()));
    await runCli(['--cluster', 'create', ...this.seeds, '--cluster-replicas', '0', '--cluster-yes']);
    await waitFor('the cluster to agree on every slot', async () => {
      for (const node of this.nodes) {
        const state = info(await command(node.port, 'CLUSTER', 'INFO'));
        if (
          state.cluster_state !== 'ok' ||
          state.cluster_slots_ok !== '16384' ||
          state.cluster_known_nodes !== String(size)
        )
          return false;
      }
      return true;
    });
    return this;
  }

  /** The node that serves a key's slot, by asking the cluster. */
  async ownerOf(key: string): Promise<{ node: RedisProcess; id: string; slot: number }> {
    const slot = Number(await command(this.nodes[0].port, 'CLUSTER', 'KEYSLOT', key));
    const shards = (await command(this.nodes[0].port, 'CLUSTER', 'SLOTS')) as [
      number,
      number,
      [string, number, string],
    ][];
    const range = shards.find(([from, to]) => slot >= from && slot <= to)!;
    const port = Number(range[2][1]);
    return { node: this.nodes.find((n) => n.port === port)!, id: String(range[2][2]), slot };
  }

  /** Keys matching `pattern` on every primary (or on `on` only). */
  async keys(pattern: string, on?: RedisProcess): Promise<string[]> {
    const found: string[] = [];
    for (const node of on ? [on] : this.nodes) found.push(...((await command(node.port, 'KEYS', pattern)) as string[]));
    return found.sort();
  }

  async nodeId(node: RedisProcess): Promise<string> {
    return String(await command(node.port, 'CLUSTER', 'MYID'));
  }

  /**
   * Moves one slot to another primary the way `redis-cli --cluster reshard` does: IMPORTING on the
   * target, MIGRATING on the source, MIGRATE of its keys (a few per call, so traffic runs between them),
   * then the new owner announced to every node. Returns the new owner.
   */
  async moveSlot(slot: number, onStep?: () => Promise<void>): Promise<RedisProcess> {
    const owner = await this.ownerOfSlot(slot);
    const target = this.nodes.find((n) => n !== owner)!;
    const [sourceId, targetId] = [await this.nodeId(owner), await this.nodeId(target)];
    await command(target.port, 'CLUSTER', 'SETSLOT', slot, 'IMPORTING', sourceId);
    await command(owner.port, 'CLUSTER', 'SETSLOT', slot, 'MIGRATING', targetId);
    await onStep?.();
    for (;;) {
      const keys = (await command(owner.port, 'CLUSTER', 'GETKEYSINSLOT', slot, 2)) as string[];
      if (keys.length === 0) break;
      await command(owner.port, 'MIGRATE', HOST, target.port, '', 0, 5_000, 'KEYS', ...keys);
      await onStep?.();
    }
    await command(target.port, 'CLUSTER', 'SETSLOT', slot, 'NODE', targetId);
    await command(owner.port, 'CLUSTER', 'SETSLOT', slot, 'NODE', targetId);
    for (const other of this.nodes) {
      if (other !== owner && other !== target) await command(other.port, 'CLUSTER', 'SETSLOT', slot, 'NODE', targetId);
    }
    await waitFor(`slot ${slot} to be served by its new owner everywhere`, async () => {
      for (const node of this.nodes) {
        const shards = (await command(node.port, 'CLUSTER', 'SLOTS')) as [number, number, [string, number]][];
        const range = shards.find(([from, to]) => slot >= from && slot <= to);
        if (!range || Number(range[2][1]) !== target.port) return false;
      }
      return true;
    });
    return target;
  }

  async stop(): Promise<void> {
    await Promise.all(this.nodes.map((n) => n.kill()));
    if (this.dir) rmSync(this.dir, { recursive: true, force: true });
  }

  private async ownerOfSlot(slot: number): Promise<RedisProcess> {
    const shards = (await command(this.nodes[0].port, 'CLUSTER', 'SLOTS')) as [number, number, [string, number]][];
    const range = shards.find(([from, to]) => slot >= from && slot <= to)!;
    return this.nodes.find((n) => n.port === Number(range[2][1]))!;
  }
}

export const SENTINEL_GROUP = 'nest-resilience-test';

/**
 * One Sentinel announcing `primary` (any address: a fault proxy in front of the test's redis-server will
 * do) as the primary of SENTINEL_GROUP. It never fails over (nothing to promote).
 */
export class TestSentinel {
  private process?: RedisProcess;
  private dir = '';

  constructor(private readonly primary: { host: string; port: number }) {}

  get address(): { host: string; port: number } {
    return { host: HOST, port: this.process!.port };
  }

  async start(): Promise<this> {
    this.dir = mkdtempSync(join(tmpdir(), 'nest-resilience-sentinel-'));
    const port = await freePort();
    const file = join(this.dir, 'sentinel.conf');
    writeFileSync(
      file,
      [
        `port ${port}`,
        `bind ${HOST}`,
        `dir ${this.dir}`,
        `sentinel monitor ${SENTINEL_GROUP} ${this.primary.host} ${this.primary.port} 1`,
        '',
      ].join('\n'),
    );
    this.process = new RedisProcess(port, SENTINEL, [file]);
    await this.process.start();
    return this;
  }

  async stop(): Promise<void> {
    await this.process?.kill();
    if (this.dir) rmSync(this.dir, { recursive: true, force: true });
  }
}

/** A primary, one replica and three Sentinels (quorum 2) watching it, failing over within about a second. */
export class TestSentinelGroup {
  primary!: RedisProcess;
  replica!: RedisProcess;
  readonly sentinels: RedisProcess[] = [];
  private dir = '';

  get addresses(): { host: string; port: number }[] {
    return this.sentinels.map((s) => ({ host: HOST, port: s.port }));
  }

  async start(): Promise<this> {
    this.dir = mkdtempSync(join(tmpdir(), 'nest-resilience-sentinel-'));
    const [primaryPort, replicaPort] = [await freePort(), await freePort()];
    this.primary = new RedisProcess(primaryPort, SERVER, serverArgs(primaryPort, this.dir));
    this.replica = new RedisProcess(
      replicaPort,
      SERVER,
      serverArgs(replicaPort, this.dir, ['--replicaof', HOST, String(primaryPort)]),
    );
    await Promise.all([this.primary.start(), this.replica.start()]);
    await waitFor('the replica to sync with the primary', async () => {
      return info(await command(replicaPort, 'INFO', 'replication')).master_link_status === 'up';
    });
    // Each Sentinel starts knowing the others and the replica (instead of discovering them over a few
    // hello rounds, two seconds apart).
    const peers = await Promise.all(
      [0, 1, 2].map(async () => ({ port: await freePort(), id: randomBytes(20).toString('hex') })),
    );
    for (const { port, id } of peers) {
      const file = join(this.dir, `sentinel-${port}.conf`);
      writeFileSync(
        file,
        [
          `port ${port}`,
          `bind ${HOST}`,
          `dir ${this.dir}`,
          `sentinel myid ${id}`,
          `sentinel monitor ${SENTINEL_GROUP} ${HOST} ${primaryPort} 2`,
          `sentinel known-replica ${SENTINEL_GROUP} ${HOST} ${replicaPort}`,
          ...peers
            .filter((p) => p.port !== port)
            .map((p) => `sentinel known-sentinel ${SENTINEL_GROUP} ${HOST} ${p.port} ${p.id}`),
          `sentinel down-after-milliseconds ${SENTINEL_GROUP} 400`,
          `sentinel failover-timeout ${SENTINEL_GROUP} 2000`,
          `sentinel parallel-syncs ${SENTINEL_GROUP} 1`,
          '',
        ].join('\n'),
      );
      this.sentinels.push(new RedisProcess(port, SENTINEL, [file]));
    }
    await Promise.all(this.sentinels.map((s) => s.start()));
    await waitFor(
      'the sentinels to know each other and the replica',
      async () => {
        for (const sentinel of this.sentinels) {
          const master = toRecord(await command(sentinel.port, 'SENTINEL', 'MASTER', SENTINEL_GROUP));
          if (master['num-other-sentinels'] !== '2' || master['num-slaves'] !== '1' || master.flags !== 'master')
            return false;
        }
        return true;
      },
      30_000,
    );
    return this;
  }

  /** The port of the primary the Sentinels currently announce. */
  async primaryPort(): Promise<number> {
    const [, port] = (await command(this.sentinels[0].port, 'SENTINEL', 'GET-MASTER-ADDR-BY-NAME', SENTINEL_GROUP)) as [
      string,
      string,
    ];
    return Number(port);
  }

  /** Waits until every Sentinel announces `port` as the primary and that server says it is one. */
  async waitForPrimary(port: number): Promise<void> {
    await waitFor(
      `the sentinels to promote the server on port ${port}`,
      async () => {
        for (const sentinel of this.sentinels) {
          const [, announced] = (await command(
            sentinel.port,
            'SENTINEL',
            'GET-MASTER-ADDR-BY-NAME',
            SENTINEL_GROUP,
          )) as [string, string];
          if (Number(announced) !== port) return false;
        }
        return info(await command(port, 'INFO', 'replication')).role === 'master';
      },
      30_000,
    );
  }

  async stop(): Promise<void> {
    await Promise.all([...this.sentinels, this.primary, this.replica].filter(Boolean).map((p) => p.kill()));
    if (this.dir) rmSync(this.dir, { recursive: true, force: true });
  }
}

function toRecord(reply: unknown): Record<string, string> {
  const list = reply as string[];
  const record: Record<string, string> = {};
  for (let i = 0; i + 1 < list.length; i += 2) record[list[i]] = String(list[i + 1]);
  return record;
}
