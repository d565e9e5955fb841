import { describe, expect, it } from '@jest/globals';
import type { Redis } from 'ioredis';
import { RedisFleetChannel, type RedisFleetChannelOptions } from '../../src/redis/redis-fleet.channel.js';
import { FakeTimeProvider } from '../../src/testing/index.js';
import { RedisFaultProxy } from './redis-fault.proxy.js';
import { cleanupAfterEach, readyClient, uniquePrefix } from './redis-test.utils.js';

/**
 * The channel the fleet's stats travel on (the dashboard's fleet view), against the test run's
 * redis-server, through the fault proxy where Redis must stop answering. `retryInterval` runs on a fake
 * clock; the operation timeout is real (a black-holed call really waits for it).
 */
const cleanups = cleanupAfterEach();
const client = (url?: string): Promise<Redis> => readyClient(cleanups, url);

async function harness(options: Partial<RedisFleetChannelOptions> = {}) {
  const proxy = await RedisFaultProxy.start(process.env.REDIS_URL!);
  cleanups.push(() => proxy.close());
  const time = new FakeTimeProvider(Date.now());
  const warnings: string[] = [];
  const logs: string[] = [];
  const keyPrefix = uniquePrefix('fleet');
  const channel = new RedisFleetChannel(await client(proxy.url), {
    keyPrefix,
    retryInterval: 1_000,
    timeProvider: time,
    logger: { warn: (m) => void warnings.push(m), log: (m) => void logs.push(m) },
    ...options,
  });
  return { proxy, time, channel, warnings, logs, key: `${keyPrefix}:fleet`, direct: await client() };
}

describe('RedisFleetChannel', () => {
  it("keeps one hash field per instance, renews the hash's expiry on each publish, and forgets instances", async () => {
    const h = await harness();
    await h.channel.publish('a', '{"calls":1}', 60_000);
    await h.channel.publish('b', '{"calls":2}', 30_000);
    await h.channel.publish('a', '{"calls":3}', 30_000); // replaces a's
    expect(await h.direct.hgetall(h.key)).toEqual({ a: '{"calls":3}', b: '{"calls":2}' });
    const ttl = await h.direct.pttl(h.key);
    expect(ttl).toBeGreaterThan(25_000);
    expect(ttl).toBeLessThanOrEqual(30_000); // the last publish's, not the first's 60 s
    expect(await h.channel.read()).toEqual(
      new Map([
        ['a', '{"calls":3}'],
        ['b', '{"calls":2}'],
      ]),
    );
    await h.channel.forget(['a']);
    await h.channel.forget([]); // nothing to send
    expect(await h.channel.read()).toEqual(new Map([['b', '{"calls":2}']]));
    expect(h.channel.isDegraded).toBe(false);
    expect([h.warnings, h.logs]).toEqual([[], []]);
  });

  it('the default key is the package prefix; an empty fleet reads as an empty map', async () => {
    const c = await client();
    const channel = new RedisFleetChannel(c, { logger: { warn: () => undefined } });
    const keyPrefixed = new RedisFleetChannel(c, {
      keyPrefix: uniquePrefix('empty'),
      logger: { warn: () => undefined },
    });
    expect(await keyPrefixed.read()).toEqual(new Map());
    const instance = uniquePrefix('instance'); // the default key may be shared with other runs
    await channel.publish(instance, 'x', 5_000);
    expect(await c.hget('nest-resilience:fleet', instance)).toBe('x');
    await channel.forget([instance]);
    expect(await c.hget('nest-resilience:fleet', instance)).toBeNull();
  });

  it('an unanswered publish starts an outage: logged once, Redis left alone for retryInterval, the answer that ends it logged once', async () => {
    const h = await harness({ operationTimeout: 500 }); // ample for an answer on a busy machine
    await h.channel.publish('a', 'before', 60_000);
    h.proxy.blackhole();
    await expect(h.channel.publish('a', 'lost', 60_000)).resolves.toBeUndefined(); // never rejects
    expect(h.channel.isDegraded).toBe(true);
    expect(h.warnings).toEqual([
      'Redis fleet stats unavailable (no answer within 500 ms); publishing pauses until it is back.',
    ]);
    // Within retryInterval: skipped without asking Redis.
    const held = h.proxy.heldToRedis;
    await expect(h.channel.read()).resolves.toBeUndefined();
    await h.channel.publish('a', 'skipped', 60_000);
    await h.channel.forget(['a']);
    expect(h.proxy.heldToRedis).toBe(held);
    h.time.advance(999);
    await h.channel.read();
    expect(h.proxy.heldToRedis).toBe(held);
    // After it: asked again; still unanswered, so a new wait but no new log line.
    h.time.advance(1);
    await expect(h.channel.read()).resolves.toBeUndefined();
    expect(h.proxy.heldToRedis).toBeGreaterThan(held);
    expect(h.warnings).toHaveLength(1);
    h.proxy.heal();
    h.time.advance(1_000);
    await h.channel.publish('a', 'after', 60_000);
    expect(h.channel.isDegraded).toBe(false);
    expect(h.logs).toEqual(['Redis fleet stats is back.']);
    expect(await h.direct.hget(h.key, 'a')).toBe('after');
  });

  it('a refused call starts an outage too, with the error in the log line', async () => {
    const h = await harness();
    h.proxy.drop();
    await h.proxy.close();
    await expect(h.channel.read()).resolves.toBeUndefined();
    expect(h.channel.isDegraded).toBe(true);
    expect(h.warnings).toEqual([
      expect.stringMatching(/^Redis fleet stats unavailable \(.+\); publishing pauses until it is back\.$/),
    ]);
  });
});
