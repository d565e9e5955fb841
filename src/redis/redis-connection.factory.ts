import { Cluster, Redis } from 'ioredis';
import { OptionsValidator } from '../core/index.js';
import { REDIS_RULES } from './redis.messages.js';
import { withTimeout } from './redis.util.js';

/** A Redis server's address. @publicApi */
export interface RedisNodeAddress {
  host: string;
  port: number;
}

/**
 * Where the shared state lives: exactly one of `url` (one server), `cluster` (a Redis Cluster: some of
 * its primaries, the rest are discovered), `sentinels` + `name` (the primary a Sentinel group manages,
 * followed through failovers), or an ioredis `client` of yours (`Redis` or `Cluster`, never closed here).
 *
 * @publicApi
 */
export interface RedisConnectionOptions {
  /** `redis://[user:password@]host:port[/db]` or `rediss://…`. */
  url?: string;
  /** Seed nodes of a Redis Cluster, as `host:port` strings or addresses. */
  cluster?: (string | RedisNodeAddress)[];
  /** The Sentinels watching the primary named `name`. */
  sentinels?: RedisNodeAddress[];
  /** The Sentinel master group name (with `sentinels`). */
  name?: string;
  /** Credentials of the data nodes (cluster and Sentinel; a `url` carries its own). */
  username?: string;
  password?: string;
  /** Credentials of the Sentinels, when they need their own. */
  sentinelUsername?: string;
  sentinelPassword?: string;
  /** The database (a single server or a Sentinel-managed primary). */
  db?: number;
  /**
   * Connect with TLS (cluster and Sentinel — the Sentinels as well as the data nodes; a `url` says so
   * with `rediss://`).
   */
  tls?: boolean;
  /** An ioredis `Redis` or `Cluster` client of yours; the library never closes it. */
  client?: Redis | Cluster;
}

/** An open connection and how to let go of it. @internal */
export interface RedisConnection {
  readonly client: Redis | Cluster;
  /** What kind of deployment it talks to, for log lines (never the addresses). */
  readonly topology: 'server' | 'cluster' | 'sentinel' | 'client';
  /**
   * Resolves once connected, or with the first error of the attempt (the stores fall back meanwhile, and
   * the client keeps reconnecting on its own): it never waits for an unreachable Redis.
   */
  connect(): Promise<unknown>;
  /**
   * Closes a connection opened here, waiting at most `grace` ms for Redis to acknowledge (a partitioned
   * Redis never does); leaves a given client open.
   */
  close(grace: number): Promise<void>;
}

const TOPOLOGY_KEYS = ['url', 'cluster', 'sentinels', 'client'] as const;

/** Checks the connection part of the options, adding every problem under `validator`. @internal */
export function validateRedisConnectionOptions(validator: OptionsValidator, options: RedisConnectionOptions): void {
  const given = TOPOLOGY_KEYS.filter((k) => options[k] !== undefined);
  if (given.length !== 1) {
    validator.add(
      given.length === 0 ? 'url' : given.join(' + '),
      given.length === 0 ? undefined : '[several]',
      REDIS_RULES.oneTopology,
    );
  }
  validator.string('url', options.url);
  if (options.cluster !== undefined) {
    if (!Array.isArray(options.cluster) || options.cluster.length === 0) {
      validator.add('cluster', options.cluster, REDIS_RULES.clusterNodes);
    } else {
      options.cluster.forEach((node, i) => {
        if (parseNode(node) === undefined) validator.add(`cluster[${i}]`, node, REDIS_RULES.clusterNode);
      });
    }
  }
  if (options.sentinels !== undefined) {
    if (!Array.isArray(options.sentinels) || options.sentinels.length === 0) {
      validator.add('sentinels', options.sentinels, REDIS_RULES.sentinelNodes);
    } else {
      options.sentinels.forEach((node, i) => {
        if (parseNode(node) === undefined) validator.add(`sentinels[${i}]`, node, REDIS_RULES.sentinelNode);
      });
    }
    if (typeof options.name !== 'string' || options.name.length === 0) {
      validator.add('name', options.name, REDIS_RULES.sentinelName);
    }
  } else if (options.name !== undefined) {
    validator.add('name', options.name, REDIS_RULES.nameWithoutSentinels);
  }
  for (const secret of ['password', 'sentinelPassword'] as const) {
    const value = options[secret];
    if (value !== undefined && typeof value !== 'string') validator.add(secret, '[redacted]', REDIS_RULES.string);
  }
  validator.string('username', options.username);
  validator.string('sentinelUsername', options.sentinelUsername);
  validator.number('db', options.db, { min: 0, integer: true });
  validator.boolean('tls', options.tls);
  if (
    options.client !== undefined &&
    typeof (options.client as { defineCommand?: unknown } | null)?.defineCommand !== 'function'
  ) {
    validator.add('client', '[object]', REDIS_RULES.ioredisClient);
  }
}

/**
 * Opens the connection the options describe. Connections opened here have no offline queue and no
 * per-command retries, so an outage is seen at once (the stores then use their outage mode) rather
 * than piling commands up; they reconnect on their own.
 *
 * @internal
 */
export function openRedisConnection(options: RedisConnectionOptions): RedisConnection {
  if (options.client) {
    const client = options.client;
    return {
      client,
      // Stryker disable next-line StringLiteral: equivalent — a given client's connect() never fails, so its topology never reaches the log line that names it
      topology: 'client',
      // Stryker disable next-line ArrowFunction: equivalent — awaiting undefined is awaiting a resolved promise
      connect: () => Promise.resolve(undefined),
      // Stryker disable next-line ArrowFunction: equivalent — awaiting undefined is awaiting a resolved promise
      close: () => Promise.resolve(),
    };
  }
  const reconnect = (attempt: number) => Math.min(50 * attempt, 500);
  let client: Redis | Cluster;
  let topology: RedisConnection['topology'];
  if (options.cluster) {
    topology = 'cluster';
    client = new Cluster(
      options.cluster.map((n) => parseNode(n)!),
      {
        lazyConnect: true,
        enableOfflineQueue: false,
        clusterRetryStrategy: reconnect,
        // Slot moves (resharding) are followed at once; a slot half-way through a move is retried quickly,
        // well inside the stores' operation timeout.
        retryDelayOnMoved: 0,
        retryDelayOnTryAgain: 5,
        retryDelayOnClusterDown: 50,
        retryDelayOnFailover: 50,
        slotsRefreshTimeout: 1_000,
        redisOptions: {
          maxRetriesPerRequest: 0,
          username: options.username,
          password: options.password,
          tls: options.tls ? {} : undefined,
        },
      },
    );
  } else if (options.sentinels) {
    topology = 'sentinel';
    client = new Redis({
      sentinels: options.sentinels.map((n) => parseNode(n)!),
      name: options.name!,
      username: options.username,
      password: options.password,
      sentinelUsername: options.sentinelUsername,
      sentinelPassword: options.sentinelPassword,
      db: options.db,
      tls: options.tls ? {} : undefined,
      // TLS to the Sentinels themselves too: without it they are asked (and answer, the credentials
      // included) in plain text.
      sentinelTLS: options.tls ? {} : undefined,
      // TLS to the primary the Sentinels announce, when `tls` is set (ioredis applies it only then).
      enableTLSForSentinelMode: true,
      // Follow a promotion as soon as the Sentinels announce it.
      failoverDetector: true,
      // A Sentinel that hangs (paused, partitioned) is left for the next one instead of holding the
      // reconnection up for good.
      sentinelCommandTimeout: 1_000,
      sentinelRetryStrategy: reconnect,
      retryStrategy: reconnect,
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
    });
  } else {
    topology = 'server';
    client = new Redis(options.url!, {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      retryStrategy: reconnect,
    });
  }
  client.on('error', () => undefined); // outages are reported once each by the stores
  // ioredis ends a client for good when a reconnection attempt is aborted — a Sentinel client does when the
  // Sentinels announce a new primary while it is reconnecting ("Connection is closed."). No connection
  // opened here may end while the application runs: it starts over, as after any other disconnection.
  let closing = false;
  client.on('end', () => {
    if (closing) return;
    const timer = setTimeout(() => {
      if (!closing && client.status === 'end') client.connect().catch(() => undefined);
    }, reconnect(1));
    timer.unref();
  });
  return {
    client,
    topology,
    connect: () =>
      new Promise<unknown>((resolve) => {
        // connect() does not always settle: a client that retries on its own (Sentinels that cannot be
        // reached) tells of the failed attempt by its first error event only, and a cluster whose ready
        // check fails (a node in a minority partition, a dead primary asked first) closes and starts over
        // without settling it. The first of ready, error and close tells how the start went.
        const ready = (): void => settle(undefined);
        const closed = (): void => settle(new Error('the connection closed before it was ready'));
        const settle = (error: unknown): void => {
          client.off('error', settle);
          client.off('ready', ready);
          client.off('close', closed);
          resolve(error);
        };
        client.once('error', settle);
        client.once('ready', ready);
        client.once('close', closed);
        client.connect().then(ready, settle);
      }),
    close: async (grace) => {
      closing = true;
      // Stryker disable next-line ConditionalExpression: equivalent as "true" — without an offline queue a client that is not ready refuses quit() at once, and disconnect() follows either way
      if (client.status === 'ready') await withTimeout(client.quit(), grace).catch(() => undefined);
      client.disconnect(); // also stops reconnecting
    },
  };
}

function parseNode(node: unknown): RedisNodeAddress | undefined {
  if (typeof node === 'string') {
    const match = /^(.+):(\d{1,5})$/.exec(node.trim());
    return match ? parseNode({ host: match[1], port: Number(match[2]) }) : undefined;
  }
  const { host, port } = (node ?? {}) as Partial<RedisNodeAddress>;
  if (typeof host === 'string' && Number.isInteger(port) && port! > 0 && port! < 65_536) {
    // An IPv6 address may come in brackets, "[::1]"; no host has a bracket otherwise.
    const bare = host.replace(/^\[(.*)\]$/, '$1');
    if (bare.length > 0 && !/[[\]]/.test(bare)) return { host: bare, port: port! };
  }
  return undefined;
}
