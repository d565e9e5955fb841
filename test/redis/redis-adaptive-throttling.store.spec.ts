import { describe, expect, it } from '@jest/globals';
import type { Redis } from 'ioredis';
import type { AdaptiveThrottlingSyncRequest } from '../../src/core.entry.js';
import { RedisAdaptiveThrottlingStore, type RedisAdaptiveThrottlingStoreOptions } from '../../src/redis/index.js';
import { FakeTimeProvider } from '../../src/testing/index.js';
import { keySlot } from '../../src/redis/redis.util.js';
import { RedisFaultProxy } from './redis-fault.proxy.js';
import { cleanupAfterEach, readyClient, uniquePrefix } from './redis-test.utils.js';

/**
 * The Redis store of fleet-shared adaptive throttling windows, against the test run's redis-server —
 * through the fault proxy where Redis must stop answering. `retryInterval` runs on a fake clock; the
 * operation timeout is real (a black-holed call really waits for it).
 */
const BUDGET = 100;
const RETRY_INTERVAL = 1_000;

const cleanups = cleanupAfterEach();
const client = (url?: string): Promise<Redis> => readyClient(cleanups, url);

function request(overrides: Partial<AdaptiveThrottlingSyncRequest> = {}): AdaptiveThrottlingSyncRequest {
  return {
    key: 'inventory:adaptive-throttling',
    instance: 'a',
    firstBucket: 81,
    lastBucket: 100,
    ttl: 21_000,
    counts: [],
    ...overrides,
  };
}

async function harness(options: Partial<RedisAdaptiveThrottlingStoreOptions> = {}) {
  const proxy = await RedisFaultProxy.start(process.env.REDIS_URL!);
  cleanups.push(() => proxy.close());
  const time = new FakeTimeProvider(Date.now());
  const warnings: string[] = [];
  const logs: string[] = [];
  const store = new RedisAdaptiveThrottlingStore({
    client: await client(proxy.url),
    keyPrefix: uniquePrefix('at'),
    // operationTimeout: the default, BUDGET
    retryInterval: RETRY_INTERVAL,
    timeProvider: time,
    logger: { warn: (m) => void warnings.push(m), log: (m) => void logs.push(m) },
    ...options,
  });
  return { proxy, time, store, warnings, logs };
}

describe('Redis adaptive throttling store: keys and sums', () => {
  it('keeps one hash per bucket, <keyPrefix>:at:{<key>}:<bucket>, expiring after ttl', async () => {
    const c = await client();
    const keyPrefix = uniquePrefix('app');
    const store = new RedisAdaptiveThrottlingStore({ client: c, keyPrefix, operationTimeout: 5_000 });
    const answer = await store.sync(
      request({
        key: 'rpc:{orders}%',
        counts: [
          { bucket: 99, requests: 3, accepts: 1 },
          { bucket: 100, requests: 2, accepts: 0 },
        ],
      }),
    );
    expect(answer).toEqual([
      { bucket: 99, requests: 3, accepts: 1 },
      { bucket: 100, requests: 2, accepts: 0 },
    ]);
    const tag = 'rpc%3A%7Borders%7D%25';
    expect((await c.keys(`${keyPrefix}:*`)).sort()).toEqual([
      `${keyPrefix}:at:{${tag}}:100`,
      `${keyPrefix}:at:{${tag}}:99`,
    ]);
    expect(store.keyFor('rpc:{orders}%', 99)).toBe(`${keyPrefix}:at:{${tag}}:99`);
    // The key is the hash tag: every bucket of a window is in one cluster slot.
    expect(new Set([1, 2, 99, 100].map((b) => keySlot(store.keyFor('rpc:{orders}%', b)))).size).toBe(1);
    expect(await c.hgetall(`${keyPrefix}:at:{${tag}}:99`)).toEqual({ r: '3', a: '1', 'r:a': '3', 'a:a': '1' });
    const ttl = await c.pttl(`${keyPrefix}:at:{${tag}}:99`);
    expect(ttl).toBeGreaterThan(20_000);
    expect(ttl).toBeLessThanOrEqual(21_000);
    // The default prefix is the application's name (the package.json of the working directory).
    expect(new RedisAdaptiveThrottlingStore({ client: c }).keyFor('k', 1)).toBe('nest-resilience:at:{k}:1');
  });

  it("sums every instance's totals per bucket; a sync repeated or late counts once; buckets outside the window are ignored", async () => {
    const store = new RedisAdaptiveThrottlingStore({
      client: await client(),
      keyPrefix: uniquePrefix('sums'),
      operationTimeout: 5_000,
    });
    await store.sync(request({ instance: 'a', counts: [{ bucket: 90, requests: 4, accepts: 2 }] }));
    const sent = request({ instance: 'b', counts: [{ bucket: 90, requests: 3, accepts: 3 }] });
    await store.sync(sent);
    expect(await store.sync(sent)).toEqual([{ bucket: 90, requests: 7, accepts: 5 }]); // the same totals again
    // B's totals grew; a late sync with its older totals adds nothing.
    await store.sync(request({ instance: 'b', counts: [{ bucket: 90, requests: 5, accepts: 3 }] }));
    const late = await store.sync(request({ instance: 'b', counts: [{ bucket: 90, requests: 4, accepts: 3 }] }));
    expect(late).toEqual([{ bucket: 90, requests: 9, accepts: 5 }]);
    // Buckets outside [firstBucket, lastBucket] are neither written nor answered.
    const moved = await store.sync(
      request({
        instance: 'a',
        firstBucket: 91,
        lastBucket: 110,
        counts: [
          { bucket: 90, requests: 9, accepts: 9 },
          { bucket: 111, requests: 9, accepts: 9 },
          { bucket: 110, requests: 1, accepts: 0 },
        ],
      }),
    );
    expect(moved).toEqual([{ bucket: 110, requests: 1, accepts: 0 }]);
    expect(await store.sync(request({ instance: 'c' }))).toEqual([{ bucket: 90, requests: 9, accepts: 5 }]);
  });
});

describe('Redis adaptive throttling store when Redis does not answer', () => {
  it('rejects within operationTimeout, logs once, fails at once for retryInterval, then answers again and logs that once', async () => {
    const h = await harness();
    h.proxy.blackhole();
    await expect(h.store.sync(request({ counts: [{ bucket: 95, requests: 2, accepts: 0 }] }))).rejects.toThrow(
      `no answer within ${BUDGET} ms`,
    );
    expect(h.store.isDegraded).toBe(true);
    expect(h.warnings).toEqual([
      `Redis adaptive throttling store unavailable (no answer within ${BUDGET} ms); each instance throttles on its own counts until it is back.`,
    ]);
    // Left alone: rejected without asking Redis (nothing more reaches the proxy's black hole).
    h.time.advance(RETRY_INTERVAL - 1);
    await expect(h.store.sync(request())).rejects.toThrow('left alone');
    h.time.advance(1);
    await expect(h.store.sync(request())).rejects.toThrow(`no answer within ${BUDGET} ms`);
    expect(h.warnings).toHaveLength(1);

    h.proxy.heal();
    h.time.advance(RETRY_INTERVAL);
    // The first sync, held in the black hole, reached Redis when it healed; sent again, it counts once.
    const answer = await h.store.sync(request({ counts: [{ bucket: 95, requests: 2, accepts: 0 }] }));
    expect(answer).toEqual([{ bucket: 95, requests: 2, accepts: 0 }]);
    expect(h.store.isDegraded).toBe(false);
    expect(h.logs).toEqual(['Redis adaptive throttling store is back.']);
  });
});
