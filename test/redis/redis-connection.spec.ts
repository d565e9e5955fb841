import 'reflect-metadata';
import { afterAll, afterEach, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { Logger, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import type { Redis } from 'ioredis';
import { ResilienceModule, ResiliencePipelineRegistry } from '../../src/index.js';
import { CIRCUIT_BREAKER_STATE_STORE } from '../../src/nest/index.js';
import type { RedisStoreConfig } from '../../src/nest/options/resilience-module-options.interface.js';
import type { RedisCircuitBreakerStateStore } from '../../src/redis/index.js';
import { openRedisConnection } from '../../src/redis/redis-connection.factory.js';
import { toCircuitPolicy } from '../../src/core/circuit-breaker/circuit-breaker.strategy.js';
import { RedisFaultProxy } from './redis-fault.proxy.js';
import { ready, redisClient, uniquePrefix } from './redis-test.utils.js';
import { command, SENTINEL_GROUP, TestSentinel, TestSentinelGroup, waitFor } from './redis-topology.utils.js';

/**
 * The connection the module opens from `store.redis` (a url, cluster seeds, Sentinels) or takes as given
 * (`client`), on the real clock against the test run's redis-server, through the fault proxy where the
 * test needs to see the connections. Where no cluster or Sentinel is at hand, the proxy stands for an
 * address that does not answer like one: the start must go on, and calls must be answered by the outage
 * mode at once — not after `operationTimeout`, which these tests set far beyond the test's own limit.
 */
const FAR = 60_000;
/** Far below FAR: a call answered by then did not wait for the operation timeout. */
const AT_ONCE = 5_000;

const cleanups: (() => Promise<unknown> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  jest.restoreAllMocks();
});

async function proxy(): Promise<RedisFaultProxy> {
  const p = await RedisFaultProxy.start(process.env.REDIS_URL!);
  cleanups.push(() => p.close());
  return p;
}

function hostPort(p: RedisFaultProxy): { host: string; port: number } {
  const url = new URL(p.url);
  return { host: url.hostname, port: Number(url.port) };
}

/**
 * Starts an application with this `store.redis`, a breaker pipeline (`api`) and a distributed limit of each
 * kind (`window`, `bucket`: one call a minute); collects the module's warnings.
 */
async function start(redis: RedisStoreConfig): Promise<{ app: INestApplication; warnings: string[] }> {
  const warnings: string[] = [];
  jest.spyOn(Logger.prototype, 'warn').mockImplementation((message: unknown) => void warnings.push(String(message)));
  const moduleRef = await Test.createTestingModule({
    imports: [
      ResilienceModule.forRoot({
        logging: false,
        store: { redis },
        pipelines: {
          api: { circuitBreaker: { kind: 'consecutive', failureThreshold: 1, breakDuration: 60_000 } },
          window: { rateLimiter: { kind: 'sliding-window', permitLimit: 1, window: 60_000, distributed: true } },
          bucket: {
            rateLimiter: { kind: 'token-bucket', tokenLimit: 1, replenishmentPeriod: 60_000, distributed: true },
          },
        },
      }),
    ],
  }).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  await app.init();
  let closed = false;
  cleanups.push(() => (closed ? undefined : app.close()));
  const close = app.close.bind(app);
  app.close = async () => {
    closed = true;
    await close();
  };
  return { app, warnings };
}

/** Real time passes (sockets); bounded. */
function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function eventually(check: () => boolean | Promise<boolean>, limit = 3_000): Promise<boolean> {
  const until = Date.now() + limit;
  while (Date.now() < until) {
    if (await check()) return true;
    await pause(20);
  }
  return check();
}

/** Settles like the call, or with 'waited' if it took longer than AT_ONCE. */
async function atOnce<T>(call: () => Promise<T>): Promise<T | 'waited'> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const waited = new Promise<'waited'>((resolve) => (timer = setTimeout(() => resolve('waited'), AT_ONCE)));
  try {
    return await Promise.race([call(), waited]);
  } finally {
    clearTimeout(timer);
  }
}

/** The store the module built on its connection. */
function storeOf(app: INestApplication): RedisCircuitBreakerStateStore {
  return app.get<RedisCircuitBreakerStateStore>(CIRCUIT_BREAKER_STATE_STORE);
}

/** The states of the circuits kept under `keyPrefix`. */
async function circuitStates(client: Redis, keyPrefix: string): Promise<(string | null)[]> {
  const keys = await client.keys(`${keyPrefix}:cb:*`);
  return Promise.all(keys.map((key) => client.hget(key, 'st')));
}

const notReachable = (topology: string) =>
  `Redis (${topology}) is not reachable yet; the stores use their outage mode until it is.`;

describe('the connection the module opens from store.redis', () => {
  it('a url: connected at start without a warning, used by the stores, reconnected after a reset, closed on shutdown', async () => {
    const p = await proxy();
    const keyPrefix = uniquePrefix('url');
    const { app, warnings } = await start({ url: p.url, keyPrefix, operationTimeout: FAR });
    expect(warnings).toEqual([]);
    const pipeline = app.get(ResiliencePipelineRegistry).getPipeline('api');
    await expect(pipeline.execute(() => Promise.reject(new Error('down')))).rejects.toThrow('down');
    const inspector = redisClient();
    cleanups.push(() => inspector.quit());
    await ready(inspector);
    expect(await circuitStates(inspector, keyPrefix)).toEqual(['open']);
    // The distributed limits count in Redis too, one key each.
    const registry = app.get(ResiliencePipelineRegistry);
    for (const limit of ['window', 'bucket']) {
      const limited = registry.getPipeline(limit);
      expect(await limited.execute(() => 'ok')).toBe('ok');
      await expect(limited.execute(() => 'ok')).rejects.toMatchObject({ name: 'RateLimiterRejectedError' });
    }
    expect((await inspector.keys(`${keyPrefix}:rl2:*`)).sort()).toEqual([
      `${keyPrefix}:rl2:{bucket%3ArateLimiter}`,
      `${keyPrefix}:rl2:{window%3ArateLimiter}`,
    ]);
    expect(warnings).toEqual([]);

    // The connection is reset: ioredis reconnects on its own and the store uses Redis again.
    const accepted = p.accepted;
    p.drop();
    const store = app.get<{ isDegraded: boolean }>(CIRCUIT_BREAKER_STATE_STORE);
    const back = await eventually(async () => {
      await pipeline.execute(() => 'ok').catch(() => undefined);
      return p.accepted > accepted && !store.isDegraded;
    });
    expect(back).toBe(true);

    await app.close();
    expect(await eventually(() => p.openConnections === 0)).toBe(true);
  });

  it('on shutdown, the commands already sent are answered before the connection closes', async () => {
    const p = await proxy();
    const keyPrefix = uniquePrefix('quit');
    const { app } = await start({ url: p.url, keyPrefix, operationTimeout: FAR });
    const inspector = redisClient();
    cleanups.push(() => inspector.quit());
    await ready(inspector);
    p.setLatency(200);
    const policy = toCircuitPolicy({ kind: 'consecutive', failureThreshold: 1 });
    const isolating = storeOf(app).isolate('orders', policy, Date.now()); // on its way to Redis
    await app.close();
    await isolating;
    expect(await circuitStates(inspector, keyPrefix)).toEqual(['isolated']);
  });

  it('on shutdown, a Redis that does not answer is waited for at most operationTimeout (default 100 ms)', async () => {
    const p = await proxy();
    const { app } = await start({ url: p.url, keyPrefix: uniquePrefix('quit-blackhole') });
    p.blackhole();
    expect(await atOnce(() => app.close())).toBeUndefined();
  });

  it('an unreachable url: the start goes on, one warning names the topology but not the address, calls are answered at once', async () => {
    const errors = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    const { app, warnings } = await start({ url: 'redis://127.0.0.1:1', operationTimeout: FAR, outageMode: 'allow' });
    expect(warnings).toEqual([notReachable('server')]);
    const pipeline = app.get(ResiliencePipelineRegistry).getPipeline('api');
    expect(await atOnce(() => pipeline.execute(() => 'ok'))).toBe('ok');
    // The client keeps reconnecting; its errors are the stores' to report, never printed by ioredis.
    await pause(300);
    expect(errors).not.toHaveBeenCalled();
    // ioredis prints an error event nobody listens to, but only an Error of its own realm, which Node's
    // socket errors are not inside Jest's sandbox: so the listener itself is what is checked here.
    expect((storeOf(app) as unknown as { client: Redis }).client.listenerCount('error')).toBeGreaterThan(0);
    expect(warnings.join('\n')).not.toContain('127.0.0.1');
  });

  it('a client of yours: used as given, no connection of its own, left open on shutdown', async () => {
    const client: Redis = redisClient();
    cleanups.push(() => client.quit());
    await ready(client);
    const keyPrefix = uniquePrefix('client');
    const { app, warnings } = await start({ client, keyPrefix, operationTimeout: FAR });
    const pipeline = app.get(ResiliencePipelineRegistry).getPipeline('api');
    await expect(pipeline.execute(() => Promise.reject(new Error('down')))).rejects.toThrow('down');
    expect(await circuitStates(client, keyPrefix)).toEqual(['open']);
    await app.close();
    expect(client.status).toBe('ready');
    expect(await client.ping()).toBe('PONG');
    expect(warnings).toEqual([]);
  });

  it.each([
    ['"host:port" strings', (p: RedisFaultProxy) => [`${hostPort(p).host}:${hostPort(p).port}`]],
    ['addresses', (p: RedisFaultProxy) => [hostPort(p)]],
  ])(
    'cluster seeds as %s are contacted; a seed that is no cluster: the start goes on, calls answered at once',
    async (_, seeds) => {
      const p = await proxy();
      const { app, warnings } = await start({ cluster: seeds(p), operationTimeout: FAR, outageMode: 'allow' });
      expect(p.accepted).toBeGreaterThan(0);
      expect(p.firstChunks[0].toString('latin1')).toMatch(/^\*/); // RESP, not TLS
      expect(warnings).toEqual([notReachable('cluster')]);
      const pipeline = app.get(ResiliencePipelineRegistry).getPipeline('api');
      expect(await atOnce(() => pipeline.execute(() => 'ok'))).toBe('ok');
    },
  );

  it('Sentinels are asked for the primary; when none answers as one, the start does not wait for it and calls are answered at once', async () => {
    const p = await proxy();
    const { app, warnings } = await start({
      sentinels: [hostPort(p)],
      name: 'primary',
      sentinelUsername: 'watcher',
      sentinelPassword: 'sentinel-secret',
      operationTimeout: FAR,
      outageMode: 'allow',
    });
    expect(p.accepted).toBeGreaterThan(0);
    // The Sentinel is logged in to with its own credentials.
    expect(p.firstChunks[0].toString('latin1')).toMatch(/AUTH\r\n\$7\r\nwatcher\r\n\$15\r\nsentinel-secret/);
    expect(warnings).toEqual([notReachable('sentinel')]);
    const pipeline = app.get(ResiliencePipelineRegistry).getPipeline('api');
    expect(await atOnce(() => pipeline.execute(() => 'ok'))).toBe('ok');
  });

  it('without tls, plain RESP to the primary the Sentinels announce', async () => {
    // (With tls the Sentinels are asked over TLS as well: the next test. The test's Sentinels speak
    // plain text only, so the TLS connection to the announced primary is not exercised here.)
    // Without tls, through a proxy to the test's redis-server: the same Sentinel setup, plain RESP.
    const p = await proxy();
    const plain = await new TestSentinel(hostPort(p)).start();
    cleanups.push(() => plain.stop());
    const keyPrefix = uniquePrefix('sentinel-plain');
    const second = await start({ sentinels: [plain.address], name: SENTINEL_GROUP, keyPrefix, operationTimeout: FAR });
    const pipeline = second.app.get(ResiliencePipelineRegistry).getPipeline('api');
    await expect(pipeline.execute(() => Promise.reject(new Error('down')))).rejects.toThrow('down');
    expect(p.firstChunks.some((chunk) => chunk[0] === 0x16)).toBe(false);
    const inspector = redisClient();
    cleanups.push(() => inspector.quit());
    await ready(inspector);
    expect(await circuitStates(inspector, keyPrefix)).toEqual(['open']);
    expect(second.warnings).toEqual([]);
  });

  it('tls: true speaks TLS to the Sentinels themselves too', async () => {
    // A "Sentinel" that only records what each connection sends first, then hangs up.
    const firstChunks: Buffer[] = [];
    const recorder = createServer((socket) =>
      socket.once('data', (chunk: Buffer) => {
        firstChunks.push(chunk);
        socket.destroy();
      }),
    );
    await new Promise<void>((resolve) => recorder.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => recorder.close(() => resolve())));
    const { app, warnings } = await start({
      sentinels: [{ host: '127.0.0.1', port: (recorder.address() as AddressInfo).port }],
      name: SENTINEL_GROUP,
      sentinelPassword: 'sentinel-secret',
      tls: true,
      operationTimeout: FAR,
      outageMode: 'allow',
    });
    expect(await eventually(() => firstChunks.length > 0)).toBe(true);
    expect(firstChunks.every((chunk) => chunk[0] === 0x16)).toBe(true); // a TLS handshake, never RESP
    expect(firstChunks.some((chunk) => chunk.toString('latin1').includes('sentinel-secret'))).toBe(false);
    expect(warnings).toEqual([notReachable('sentinel')]);
    const pipeline = app.get(ResiliencePipelineRegistry).getPipeline('api');
    expect(await atOnce(() => pipeline.execute(() => 'ok'))).toBe('ok');
  });

  it('tls: true makes the cluster connections speak TLS', async () => {
    const p = await proxy();
    await start({ cluster: [hostPort(p)], tls: true, operationTimeout: FAR, outageMode: 'allow' });
    expect(await eventually(() => p.firstChunks.length > 0)).toBe(true);
    expect(p.firstChunks[0][0]).toBe(0x16); // a TLS handshake record
  });
});

describe('a Sentinel-managed primary that hangs', () => {
  const group = new TestSentinelGroup();
  beforeAll(async () => {
    await group.start();
  }, 60_000);
  afterAll(async () => {
    await group.stop();
  });

  it('is left for the replica the Sentinels promote as soon as they announce it, while it still hangs', async () => {
    const keyPrefix = uniquePrefix('sentinel-hang');
    const { app, warnings } = await start({
      sentinels: group.addresses,
      name: SENTINEL_GROUP,
      keyPrefix,
      retryInterval: 100,
    });
    expect(warnings).toEqual([]);
    const pipeline = app.get(ResiliencePipelineRegistry).getPipeline('api');
    const store = storeOf(app);
    expect(await pipeline.execute(() => 'ok')).toBe('ok');
    group.primary.pause(); // its connections stay open and nothing answers: no reconnection would find out
    cleanups.push(() => group.primary.resume());
    await waitFor('the store to fall back', async () => {
      await pipeline.execute(() => 'ok');
      return store.isDegraded;
    });
    await group.waitForPrimary(group.replica.port);
    await waitFor('the store to use the promoted replica', async () => {
      await pipeline.execute(() => 'ok');
      return !store.isDegraded;
    });
    await expect(pipeline.execute(() => Promise.reject(new Error('down')))).rejects.toThrow('down');
    expect(await command(group.replica.port, 'KEYS', `${keyPrefix}:cb:*`)).toHaveLength(1);
  }, 60_000);
});

describe('the reconnection schedule of a connection opened here', () => {
  it('reconnects on its own: 50 ms later with each attempt, at most 500 ms apart', async () => {
    const connection = openRedisConnection({ url: 'redis://127.0.0.1:1' });
    const retryStrategy = (connection.client as Redis).options.retryStrategy!;
    expect([1, 2, 5, 10, 11, 100].map((attempt) => retryStrategy(attempt))).toEqual([50, 100, 250, 500, 500, 500]);
    await connection.close(0);
  });
});

describe('a connection opened here never ends while the application runs', () => {
  const readyAgain = (client: Redis) => new Promise<void>((resolve) => client.once('ready', () => resolve()));

  it('a client that ends on its own (ioredis gives up a reconnection) starts over; one closed on shutdown stays closed', async () => {
    const connection = openRedisConnection({ url: process.env.REDIS_URL! });
    const client = connection.client as Redis;
    expect(await connection.connect()).toBeUndefined();
    expect(client.status).toBe('ready');
    // What ioredis does when a reconnection attempt is aborted: the client ends, for good unless started over.
    const ended = new Promise((resolve) => client.once('end', resolve));
    const again = readyAgain(client);
    client.disconnect();
    await ended;
    await again;
    expect(await client.ping()).toBe('PONG');
    // Closing: ended, and left so.
    let reconnected = false;
    client.once('connect', () => (reconnected = true));
    const closed = new Promise((resolve) => client.once('end', resolve));
    await connection.close(1_000);
    await closed;
    await new Promise((resolve) => setTimeout(resolve, 200)); // past the 50 ms after which it would start over
    expect(reconnected).toBe(false);
    expect(client.status).toBe('end');
  });

  it('connect() settles with the failure of a connection that closes before it is ready', async () => {
    // A server that accepts and closes at once: the client's first close comes before any ready.
    const sockets: Socket[] = [];
    const closing = createServer((socket) => void sockets.push(socket.destroy()));
    await new Promise<void>((resolve) => closing.listen(0, '127.0.0.1', resolve));
    const port = (closing.address() as { port: number }).port;
    const connection = openRedisConnection({ url: `redis://127.0.0.1:${port}` });
    try {
      // Whichever the client sees first, the write that failed or the close: connect() settles with it.
      const error = await connection.connect();
      expect(String(error)).toMatch(/EPIPE|ECONNRESET|the connection closed before it was ready/);
    } finally {
      await connection.close(0);
      await new Promise((resolve) => closing.close(resolve));
    }
  });
});
