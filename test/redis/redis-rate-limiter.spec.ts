import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import type { Redis } from 'ioredis';
import {
  RateLimit,
  RateLimiterRejectedError,
  ResilienceContext,
  ResilienceModule,
  ResiliencePipelineBuilder,
  ResiliencePipelineRegistry,
} from '../../src/index.js';
import { RedisRateLimiter } from '../../src/redis/index.js';
import { FakeTimeProvider } from '../../src/testing/index.js';
import { ready, redisClient, uniquePrefix } from './redis-test.utils.js';

async function admitted(results: Promise<unknown>[]): Promise<number> {
  const settled = await Promise.allSettled(results);
  for (const r of settled)
    if (r.status === 'rejected' && !(r.reason instanceof RateLimiterRejectedError)) throw r.reason;
  return settled.filter((r) => r.status === 'fulfilled').length;
}

describe('distributed rate limiters on Redis', () => {
  const clients: Redis[] = [];
  beforeAll(async () => {
    for (let i = 0; i < 3; i++) clients.push(redisClient());
    await Promise.all(clients.map(ready));
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.quit()));
  });

  it('no two limits or partitions share a key, whatever their names hold (property)', () => {
    const client = { defineCommand: () => undefined } as unknown as Redis;
    const text = fc.string({ unit: fc.constantFrom('a', ':', '{', '}', '%', '3', 'A'), maxLength: 6 });
    fc.assert(
      fc.property(fc.tuple(text, text), fc.tuple(text, text), ([n1, p1], [n2, p2]) => {
        fc.pre(n1 !== n2 || p1 !== p2);
        const key = (name: string, partition: string) =>
          new RedisRateLimiter({ client, name, limit: { kind: 'sliding-window', permitLimit: 1, window: 1 } }).keyFor(
            partition,
          );
        expect(key(n1, p1)).not.toBe(key(n2, p2));
        // One hash tag, the whole of name and partition: each partition is hashed on its own.
        expect(key(n1, p1)).toMatch(/^nest-resilience:rl2:\{[^{}]*\}$/);
      }),
      { numRuns: 2_000 },
    );
  });

  it('pipeline "rpc:inventory" and pipeline "rpc" with key "inventory" have limits of their own', async () => {
    @Injectable()
    class Unused {}
    const keyPrefix = uniquePrefix('collide');
    const moduleRef = await Test.createTestingModule({
      imports: [
        ResilienceModule.forRoot({
          store: { redis: { client: clients[0], keyPrefix, operationTimeout: 2_000 } },
          pipelines: {
            'rpc:inventory': {
              rateLimiter: { kind: 'sliding-window', permitLimit: 1, window: 60_000, distributed: true },
            },
            rpc: { rateLimiter: { kind: 'sliding-window', permitLimit: 1, window: 60_000, distributed: true } },
          },
        }),
      ],
      providers: [Unused],
    }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    try {
      const registry = app.get(ResiliencePipelineRegistry);
      const composite = registry.getPipeline('rpc:inventory');
      const keyed = registry.getPipeline('rpc', 'inventory');
      expect(await admitted([composite.execute(() => 'ran')])).toBe(1);
      expect(await admitted([keyed.execute(() => 'ran')])).toBe(1); // its own permit, not the one taken above
      expect(await admitted([composite.execute(() => 'ran'), keyed.execute(() => 'ran')])).toBe(0);
    } finally {
      await app.close();
    }
  });

  it('a caller cancelled already takes no permit of a shared limit', async () => {
    const cancelled = new AbortController();
    cancelled.abort(new Error('cancelled already'));
    const time = new FakeTimeProvider(Date.now());
    const keyPrefix = uniquePrefix('cancelled');
    for (const limit of [
      { kind: 'sliding-window', permitLimit: 2, window: 60_000 },
      { kind: 'token-bucket', tokenLimit: 2, replenishmentPeriod: 60_000 },
    ] as const) {
      const limiter = new RedisRateLimiter({
        client: clients[0],
        keyPrefix,
        name: limit.kind,
        limit,
        timeProvider: time,
        operationTimeout: 5_000,
      });
      const pipeline = new ResiliencePipelineBuilder({ timeProvider: time }).addRateLimiter({ limiter }).build();
      for (let i = 0; i < 3; i++) {
        await expect(
          Promise.resolve(limiter.acquire(new ResilienceContext({ signal: cancelled.signal }))),
        ).rejects.toThrow('cancelled already');
        await expect(pipeline.execute(() => 'ran', { signal: cancelled.signal })).rejects.toThrow('cancelled already');
      }
      expect(await admitted([0, 1, 2].map(() => pipeline.execute(() => 'ran')))).toBe(2);
    }
  });

  it('a sliding window admits exactly permitLimit calls across every instance, and frees them a window later', async () => {
    const time = new FakeTimeProvider(Date.now());
    const keyPrefix = uniquePrefix('sliding');
    const pipelines = clients.map((client) =>
      new ResiliencePipelineBuilder({ timeProvider: time })
        .addRateLimiter({
          limiter: new RedisRateLimiter({
            client,
            keyPrefix,
            name: 'api',
            operationTimeout: 2_000, // what is admitted, not how fast a loaded machine answers
            limit: { kind: 'sliding-window', permitLimit: 10, window: 1_000 },
            timeProvider: time,
          }),
        })
        .build(),
    );
    const burst = () => Array.from({ length: 30 }, (_, i) => pipelines[i % 3].execute(() => 'ok'));
    expect(await admitted(burst())).toBe(10);
    const key = `${keyPrefix}:rl2:{api}`;
    const ttl = await clients[0].pttl(key);
    expect(ttl).toBeGreaterThan(0); // nothing is left without an expiry
    expect(ttl).toBeLessThanOrEqual(1_000);
    time.advance(999);
    expect(await admitted(burst())).toBe(0);
    time.advance(1);
    expect(await admitted(burst())).toBe(10);
  });

  it('a token bucket refills exactly on the clock, shared by every instance, with retry-after', async () => {
    const time = new FakeTimeProvider(Date.now());
    const keyPrefix = uniquePrefix('bucket');
    const limiters = clients.map(
      (client) =>
        new RedisRateLimiter({
          client,
          keyPrefix,
          name: 'api',
          operationTimeout: 2_000,
          limit: { kind: 'token-bucket', tokenLimit: 4, tokensPerPeriod: 2, replenishmentPeriod: 500 },
          timeProvider: time,
        }),
    );
    const take = async () =>
      Promise.all(
        Array.from({ length: 6 }, (_, i) => Promise.resolve(limiters[i % 3].acquire(new ResilienceContext()))),
      );
    const first = await take();
    expect(first.filter((l) => l.acquired)).toHaveLength(4);
    expect(first.find((l) => !l.acquired)?.retryAfter).toBe(500);
    time.advance(500);
    expect((await take()).filter((l) => l.acquired)).toHaveLength(2);
    expect(await clients[0].pttl(`${keyPrefix}:rl2:{api}`)).toBeGreaterThan(0);
  });

  it('partitions by a key from the context', async () => {
    const limiter = new RedisRateLimiter({
      client: clients[0],
      keyPrefix: uniquePrefix('partition'),
      name: 'per-user',
      limit: { kind: 'sliding-window', permitLimit: 1, window: 60_000 },
      partitionKey: (ctx) => ctx.operationKey ?? 'anonymous',
      operationTimeout: 5_000,
    });
    const as = (user: string) => limiter.acquire(new ResilienceContext({ operationKey: user }));
    expect((await Promise.all([as('ann'), as('bob'), as('ann')])).map((l) => l.acquired)).toEqual([true, true, false]);
  });

  it('falls back to a local limit when Redis cannot answer', async () => {
    const broken = redisClient({ url: 'redis://127.0.0.1:1' });
    broken.on('error', () => undefined);
    const warnings: string[] = [];
    const limiter = new RedisRateLimiter({
      client: broken,
      name: 'offline',
      limit: { kind: 'sliding-window', permitLimit: 2, window: 60_000 },
      logger: { warn: (m) => warnings.push(m) },
    });
    const results = [];
    for (let i = 0; i < 3; i++) results.push((await limiter.acquire(new ResilienceContext())).acquired);
    expect(results).toEqual([true, true, false]);
    expect(warnings).toHaveLength(1);
    broken.disconnect();
  });

  it('is the limiter of a config section marked distributed when the module uses Redis', async () => {
    @Injectable()
    class Api {
      @RateLimit('api')
      call(): string {
        return 'ok';
      }
    }
    const keyPrefix = uniquePrefix('module');
    const apps = await Promise.all(
      [0, 1].map(async () => {
        const moduleRef = await Test.createTestingModule({
          imports: [
            ResilienceModule.forRoot({
              store: { redis: { url: process.env.REDIS_URL, keyPrefix, operationTimeout: 2_000 } },
              pipelines: {
                api: { rateLimiter: { kind: 'sliding-window', permitLimit: 3, window: 60_000, distributed: true } },
              },
            }),
          ],
          providers: [Api],
        }).compile();
        const app = moduleRef.createNestApplication({ logger: false });
        await app.init();
        return app;
      }),
    );
    const [a, b] = apps.map((app) => app.get(Api));
    expect(await admitted([a.call(), b.call(), a.call(), b.call(), a.call()] as unknown as Promise<unknown>[])).toBe(3);
    await Promise.all(apps.map((app) => app.close()));
  });
});
