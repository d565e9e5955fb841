import { describe, expect, it, jest } from '@jest/globals';
import type { Redis } from 'ioredis';
import { ResilienceContext } from '../../src/index.js';
import { RedisRateLimiter, type RedisRateLimiterOptions } from '../../src/redis/index.js';
import { FakeTimeProvider } from '../../src/testing/index.js';
import { RedisFaultProxy } from './redis-fault.proxy.js';
import { cleanupAfterEach, readyClient, redisClient, uniquePrefix } from './redis-test.utils.js';

/**
 * The distributed rate limiter's keys, answers and outage modes, against the test run's redis-server —
 * through the fault proxy where Redis must stop answering. The limiter's clock (what it sends as "now",
 * and when it tries Redis again) is a fake one; the time budget is real (a black-holed call really waits).
 */
const BUDGET = 100;
const RETRY_INTERVAL = 1_000;

const cleanups = cleanupAfterEach();
const client = (url?: string): Promise<Redis> => readyClient(cleanups, url);

async function harness(options: Partial<RedisRateLimiterOptions> = {}) {
  const proxy = await RedisFaultProxy.start(process.env.REDIS_URL!);
  cleanups.push(() => proxy.close());
  const time = new FakeTimeProvider(Date.now());
  const warnings: string[] = [];
  const logs: string[] = [];
  const limiter = new RedisRateLimiter({
    client: await client(proxy.url),
    name: 'api',
    keyPrefix: uniquePrefix('rl'),
    limit: { kind: 'sliding-window', permitLimit: 2, window: 60_000 },
    partitionKey: (ctx) => ctx.operationKey ?? '',
    // operationTimeout: the default, BUDGET
    retryInterval: RETRY_INTERVAL,
    timeProvider: time,
    logger: { warn: (m) => void warnings.push(m), log: (m) => void logs.push(m) },
    ...options,
  });
  cleanups.push(() => limiter.dispose());
  return { proxy, time, limiter, warnings, logs };
}

const as = (user?: string) => new ResilienceContext({ operationKey: user });
const acquired = async (lease: ReturnType<RedisRateLimiter['acquire']>) => (await lease).acquired;

describe('distributed rate limiter: keys and answers', () => {
  it('keeps one key per limit and partition, under the application prefix (default nest-resilience)', async () => {
    const c = await client();
    const name = uniquePrefix('keys');
    const keyPrefix = uniquePrefix('app');
    const limit = { kind: 'sliding-window', permitLimit: 5, window: 60_000 } as const;
    const partitioned = new RedisRateLimiter({
      client: c,
      name,
      keyPrefix,
      limit,
      partitionKey: (ctx) => ctx.operationKey!,
      operationTimeout: 5_000,
    });
    await partitioned.acquire(as('ann'));
    await new RedisRateLimiter({ client: c, name, keyPrefix, limit, operationTimeout: 5_000 }).acquire(as());
    expect((await c.keys(`${keyPrefix}:*`)).sort()).toEqual([
      `${keyPrefix}:rl2:{${name}:ann}`,
      `${keyPrefix}:rl2:{${name}}`,
    ]);
    await new RedisRateLimiter({ client: c, name, limit, operationTimeout: 5_000 }).acquire(as());
    expect(await c.exists(`nest-resilience:rl2:{${name}}`)).toBe(1);
    await c.del(`nest-resilience:rl2:{${name}}`);
  });

  it('a sliding window counts every call of one instance, also within one millisecond, and says when the oldest leaves', async () => {
    const time = new FakeTimeProvider(Date.now());
    const c = await client();
    const make = () =>
      new RedisRateLimiter({
        client: c,
        name: 'api',
        keyPrefix: uniquePrefix('window'),
        limit: { kind: 'sliding-window', permitLimit: 3, window: 1_000 },
        timeProvider: time,
        operationTimeout: 2_000,
      });
    const limiter = make();
    expect(await acquired(limiter.acquire(as()))).toBe(true);
    time.advance(300);
    expect(await acquired(limiter.acquire(as()))).toBe(true);
    expect(await acquired(limiter.acquire(as()))).toBe(true); // same millisecond, same instance: counted
    time.advance(100);
    const rejected = await limiter.acquire(as());
    expect(rejected).toMatchObject({ acquired: false, retryAfter: 600 });
  });

  it('a token bucket adds one token per period unless told otherwise, and says when the next one comes', async () => {
    const time = new FakeTimeProvider(Date.now());
    const limiter = new RedisRateLimiter({
      client: await client(),
      name: 'api',
      keyPrefix: uniquePrefix('bucket'),
      limit: { kind: 'token-bucket', tokenLimit: 3, replenishmentPeriod: 100 },
      timeProvider: time,
      operationTimeout: 2_000,
    });
    for (let i = 0; i < 3; i++) expect(await acquired(limiter.acquire(as()))).toBe(true);
    time.advance(40);
    expect(await limiter.acquire(as())).toMatchObject({ acquired: false, retryAfter: 60 });
    time.advance(260); // three periods since the start: three tokens, and never more than tokenLimit
    const leases = await Promise.all([1, 2, 3, 4].map(() => acquired(limiter.acquire(as()))));
    expect(leases.filter(Boolean)).toHaveLength(3);
  });
});

describe('distributed rate limiter when Redis does not answer', () => {
  it('by default logs to the console and leaves Redis alone for a second', async () => {
    const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    try {
      const broken = redisClient({ url: 'redis://127.0.0.1:1' });
      broken.on('error', () => undefined);
      cleanups.push(() => broken.disconnect());
      const time = new FakeTimeProvider(Date.now());
      const limiter = new RedisRateLimiter({
        client: broken,
        name: 'defaults',
        limit: { kind: 'sliding-window', permitLimit: 5, window: 60_000 },
        timeProvider: time,
      });
      expect(await acquired(limiter.acquire(as()))).toBe(true);
      expect(warn.mock.calls).toEqual([
        [
          'Redis rate limiter "defaults" unavailable (Stream isn\'t writeable and enableOfflineQueue options is false); using the "local" outage mode until it is back.',
        ],
      ]);
      time.advance(999);
      expect(limiter.acquire(as())).not.toBeInstanceOf(Promise);
      time.advance(1);
      const retried = limiter.acquire(as());
      expect(retried).toBeInstanceOf(Promise);
      expect(await acquired(retried)).toBe(true);
    } finally {
      warn.mockRestore();
    }
  });

  it('local (default): a limit per partition in this process, logged once; Redis left alone for retryInterval, then tried again', async () => {
    const h = await harness();
    expect(await acquired(h.limiter.acquire(as('ann')))).toBe(true); // through Redis
    expect(h.limiter.isIdle()).toBe(true); // nothing held in this process
    h.proxy.blackhole();
    expect(await acquired(h.limiter.acquire(as('ann')))).toBe(true); // no answer within the budget: local
    expect(h.warnings).toEqual([
      `Redis rate limiter "api" unavailable (no answer within ${BUDGET} ms); using the "local" outage mode until it is back.`,
    ]);
    // While Redis is left alone the local limit answers synchronously.
    const local = h.limiter.acquire(as('ann'));
    expect(local).not.toBeInstanceOf(Promise);
    expect(await acquired(local)).toBe(true);
    expect(await acquired(h.limiter.acquire(as('ann')))).toBe(false); // ann's local limit is used up
    expect(await acquired(h.limiter.acquire(as('bob')))).toBe(true); // bob has his own
    expect(h.limiter.isIdle()).toBe(false);

    h.time.advance(RETRY_INTERVAL - 1);
    expect(h.limiter.acquire(as('bob'))).not.toBeInstanceOf(Promise);
    h.time.advance(1);
    const retried = h.limiter.acquire(as('bob'));
    expect(retried).toBeInstanceOf(Promise); // Redis is asked again (and still does not answer)
    expect(await acquired(retried)).toBe(false); // bob's local limit decides: used up now
    expect(h.warnings).toHaveLength(1);

    h.proxy.heal();
    h.time.advance(RETRY_INTERVAL);
    // Redis decides again. bob's local limit is used up, but in Redis he has one call so far (the one
    // held in the black hole, delivered when it healed): one more is admitted there.
    expect(await acquired(h.limiter.acquire(as('bob')))).toBe(true);
    expect(await acquired(h.limiter.acquire(as('bob')))).toBe(false);
    expect(h.logs).toEqual(['Redis rate limiter "api" is back.']);
    h.limiter.dispose();
    expect(h.limiter.isIdle()).toBe(true); // the local limits are gone
  });

  it('is idle again once the local limits kept during an outage have refilled', async () => {
    const broken = redisClient({ url: 'redis://127.0.0.1:1' });
    broken.on('error', () => undefined);
    cleanups.push(() => broken.disconnect());
    const time = new FakeTimeProvider(Date.now());
    const limiter = new RedisRateLimiter({
      client: broken,
      name: 'idle',
      limit: { kind: 'sliding-window', permitLimit: 2, window: 1_000 },
      partitionKey: (ctx) => ctx.operationKey ?? '',
      timeProvider: time,
      logger: { warn: () => undefined },
    });
    cleanups.push(() => limiter.dispose());
    expect(await acquired(limiter.acquire(as('ann')))).toBe(true); // Redis cannot be reached: a local limit
    expect(await acquired(limiter.acquire(as('bob')))).toBe(true);
    expect(limiter.isIdle()).toBe(false); // ann's and bob's windows hold a call each
    time.advance(1_000);
    expect(limiter.isIdle()).toBe(true); // both windows are empty again
  });

  it.each([0, Number.POSITIVE_INFINITY])(
    'operationTimeout %s sets no time limit: a slow Redis still decides',
    async (budget) => {
      const h = await harness({ operationTimeout: budget, outageMode: 'reject' });
      h.proxy.setLatency(150);
      expect(await acquired(h.limiter.acquire(as('ann')))).toBe(true);
      expect(h.warnings).toEqual([]);
    },
  );

  it('allow: every call goes through until Redis answers', async () => {
    const h = await harness({ outageMode: 'allow' });
    h.proxy.blackhole();
    for (let i = 0; i < 5; i++) expect(await acquired(h.limiter.acquire(as('ann')))).toBe(true);
    expect(h.warnings).toEqual([
      `Redis rate limiter "api" unavailable (no answer within ${BUDGET} ms); using the "allow" outage mode until it is back.`,
    ]);
  });

  it('reject: every call is refused, with the time until Redis is tried again', async () => {
    const h = await harness({ outageMode: 'reject' });
    h.proxy.blackhole();
    expect(await h.limiter.acquire(as('ann'))).toMatchObject({ acquired: false, retryAfter: RETRY_INTERVAL });
    h.time.advance(300);
    expect(await h.limiter.acquire(as('ann'))).toMatchObject({ acquired: false, retryAfter: RETRY_INTERVAL - 300 });
    expect(h.limiter.isIdle()).toBe(true);
  });
});
