import 'reflect-metadata';
import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { Logger, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import type { Redis } from 'ioredis';
import {
  RateLimiterRejectedError,
  ResilienceModule,
  ResiliencePipelineRegistry,
  type ResilienceModuleOptions,
} from '../../src/index.js';
import type { RedisStoreConfig } from '../../src/nest/options/resilience-module-options.interface.js';
import { RedisCircuitBreakerStateStore } from '../../src/redis/index.js';
import { toCircuitPolicy } from '../../src/core/circuit-breaker/circuit-breaker.strategy.js';
import { FakeTimeProvider } from '../../src/testing/index.js';
import { RedisFaultProxy } from './redis-fault.proxy.js';
import { ready, redisClient, uniquePrefix } from './redis-test.utils.js';

/**
 * What `store.redis` hands to the stores the module builds on its connection: the distributed rate
 * limiters get the key prefix, the time budget, the retry interval, the outage mode, the module's clock
 * and logger; the circuit store sends its waiting successes before the connection closes.
 */
const cleanups: (() => Promise<unknown> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  jest.restoreAllMocks();
});

async function start(
  redis: RedisStoreConfig,
  options: Partial<ResilienceModuleOptions> = {},
): Promise<{ app: INestApplication; warnings: string[] }> {
  const warnings: string[] = [];
  jest.spyOn(Logger.prototype, 'warn').mockImplementation((message: unknown) => void warnings.push(String(message)));
  const moduleRef = await Test.createTestingModule({
    imports: [
      ResilienceModule.forRoot({
        logging: false,
        store: { redis },
        pipelines: {
          limited: { rateLimiter: { kind: 'sliding-window', permitLimit: 1, window: 1_000, distributed: true } },
          counted: {
            circuitBreaker: {
              kind: 'time-window',
              samplingDuration: 60_000,
              minimumThroughput: 100,
              failureRatio: 0.5,
            },
          },
        },
        ...options,
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

async function inspector(): Promise<Redis> {
  const c = redisClient();
  cleanups.push(() => c.quit());
  await ready(c);
  return c;
}

const pipelineOf = (app: INestApplication, name: string) => app.get(ResiliencePipelineRegistry).getPipeline(name);
const outcome = (p: Promise<unknown>) =>
  p.then(
    () => 'ran',
    (e: unknown) => (e instanceof RateLimiterRejectedError ? 'limited' : e),
  );

describe('the stores the module builds on store.redis', () => {
  it('distributed limits live under the key prefix and run on the module clock', async () => {
    const time = new FakeTimeProvider(Date.now());
    const keyPrefix = uniquePrefix('module-rl');
    const { app } = await start(
      { url: process.env.REDIS_URL, keyPrefix, operationTimeout: 2_000 },
      { timeProvider: time },
    );
    const limited = pipelineOf(app, 'limited');
    expect(await outcome(limited.execute(() => 'ok'))).toBe('ran');
    expect(await outcome(limited.execute(() => 'ok'))).toBe('limited');
    expect(await (await inspector()).keys(`${keyPrefix}:rl2:*`)).toEqual([`${keyPrefix}:rl2:{limited%3ArateLimiter}`]);
    time.advance(1_000); // the window has passed on the module clock
    expect(await outcome(limited.execute(() => 'ok'))).toBe('ran');
  });

  it.each([
    ['reject', ['limited', 'limited']],
    ['allow', ['ran', 'ran']],
    ['local', ['ran', 'limited']],
  ] as const)(
    'distributed limits use the outage mode %s while Redis cannot be reached, and log through the module',
    async (outageMode, expected) => {
      const { app, warnings } = await start({ url: 'redis://127.0.0.1:1', outageMode });
      const limited = pipelineOf(app, 'limited');
      expect([await outcome(limited.execute(() => 'ok')), await outcome(limited.execute(() => 'ok'))]).toEqual(
        expected,
      );
      expect(warnings).toContainEqual(
        `Redis rate limiter "limited:rateLimiter" unavailable (Stream isn't writeable and enableOfflineQueue options is false); using the "${outageMode}" outage mode until it is back.`,
      );
    },
  );

  it('distributed limits keep to operationTimeout and leave Redis alone for retryInterval', async () => {
    const time = new FakeTimeProvider(Date.now());
    const proxy = await RedisFaultProxy.start(process.env.REDIS_URL!);
    cleanups.push(() => proxy.close());
    const { app } = await start(
      { url: proxy.url, keyPrefix: uniquePrefix('budget'), operationTimeout: 400, retryInterval: 500 },
      { timeProvider: time },
    );
    const limited = pipelineOf(app, 'limited');
    proxy.blackhole();
    const started = Date.now();
    expect(await outcome(limited.execute(() => 'ok'))).toBe('ran'); // the local limit, after the budget
    expect(Date.now() - started).toBeGreaterThanOrEqual(390);
    time.advance(499); // within retryInterval, and within the local limit's window
    const sent = proxy.heldToRedis;
    expect(await outcome(limited.execute(() => 'ok'))).toBe('limited'); // local, at once: Redis left alone
    expect(proxy.heldToRedis).toBe(sent);
    time.advance(1);
    const retried = Date.now();
    expect(await outcome(limited.execute(() => 'ok'))).toBe('limited'); // Redis tried again, then local
    expect(Date.now() - retried).toBeGreaterThanOrEqual(390);
    expect(proxy.heldToRedis).toBeGreaterThan(sent);
    // Shutting down does not wait for the black hole either.
    const closing = Date.now();
    await app.close();
    expect(Date.now() - closing).toBeLessThan(10_000);
  });

  it('the circuit store logs through the module and reports its outages and recoveries as telemetry', async () => {
    const events: string[] = [];
    const proxy = await RedisFaultProxy.start(process.env.REDIS_URL!);
    cleanups.push(() => proxy.close());
    const { app, warnings } = await start(
      { url: proxy.url, keyPrefix: uniquePrefix('module-telemetry'), retryInterval: 100 },
      { telemetryListeners: [{ write: (event) => void events.push(event.eventName) }] },
    );
    const logs: string[] = [];
    jest.spyOn(Logger.prototype, 'log').mockImplementation((message: unknown) => void logs.push(String(message)));
    const counted = pipelineOf(app, 'counted');
    proxy.blackhole();
    await counted.execute(() => 'ok');
    expect(warnings).toContainEqual(
      'Redis circuit-breaker store unavailable (no answer within 100 ms); using the "local" outage mode until it is back.',
    );
    proxy.heal();
    const until = Date.now() + 3_000;
    while (!events.includes('OnStateStoreRestored') && Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      await counted.execute(() => 'ok');
    }
    expect(events.filter((e) => e.startsWith('OnStateStore'))).toEqual([
      'OnStateStoreUnavailable',
      'OnStateStoreRestored',
    ]);
    expect(logs).toContainEqual('Redis circuit-breaker store is back.');
  });

  it('a distributed limit with a partition key keeps one limit per partition in Redis', async () => {
    const keyPrefix = uniquePrefix('module-partition');
    const { app } = await start(
      { url: process.env.REDIS_URL, keyPrefix, operationTimeout: 2_000 },
      {
        pipelines: {
          perUser: {
            rateLimiter: {
              kind: 'sliding-window',
              permitLimit: 1,
              window: 60_000,
              distributed: true,
              partitionKey: (ctx) => ctx.operationKey ?? 'anonymous',
            },
          },
        },
      },
    );
    const perUser = pipelineOf(app, 'perUser');
    const as = (user: string) => outcome(perUser.execute(() => 'ok', { operationKey: user }));
    expect([await as('ann'), await as('bob'), await as('ann')]).toEqual(['ran', 'ran', 'limited']);
    expect((await (await inspector()).keys(`${keyPrefix}:rl2:*`)).sort()).toEqual([
      `${keyPrefix}:rl2:{perUser%3ArateLimiter:ann}`,
      `${keyPrefix}:rl2:{perUser%3ArateLimiter:bob}`,
    ]);
  });

  it('on shutdown the circuit store sends the successes still waiting before it closes the connection', async () => {
    const keyPrefix = uniquePrefix('module-flush');
    const { app } = await start({ url: process.env.REDIS_URL, keyPrefix, flushInterval: 60_000 });
    const counted = pipelineOf(app, 'counted');
    for (let i = 0; i < 3; i++) await counted.execute(() => 'ok');
    const view = new RedisCircuitBreakerStateStore({ client: await inspector(), keyPrefix });
    const policy = toCircuitPolicy({ kind: 'time-window', samplingDuration: 60_000 });
    const successes = async () => {
      const { metrics } = await view.exportSnapshot('counted/circuit-breaker', policy);
      return metrics.kind === 'time-window' ? metrics.windows.reduce((n, [, ok]) => n + ok, 0) : -1;
    };
    expect(await successes()).toBe(2); // each carried by the next call; the last one waits for the flush interval
    await app.close();
    expect(await successes()).toBe(3);
  });

  it('keeps the pending OAuth logins in Redis, on the module connection, under the key prefix', async () => {
    const { OAuthModule, OAuthClientService } = await import('../../src/nest/oauth/index.js');
    const keyPrefix = uniquePrefix('module-oauth');
    const moduleRef = await Test.createTestingModule({
      imports: [
        ResilienceModule.forRoot({ logging: false, store: { redis: { url: process.env.REDIS_URL, keyPrefix } } }),
        OAuthModule.register({
          issuer: 'https://idp.example',
          clientId: 'web-app',
          clientSecret: 'secret',
          redirectUri: 'https://app.example/auth/callback',
          // No discovery: a login starts without the provider.
          endpoints: {
            authorization: 'https://idp.example/authorize',
            token: 'https://idp.example/token',
            jwks: 'https://idp.example/jwks',
          },
          logger: { log: () => undefined, warn: () => undefined, error: () => undefined },
        }),
      ],
    }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    cleanups.push(() => app.close());
    const { state } = await app.get(OAuthClientService).startLogin({ returnTo: '/orders' });
    const redis = await inspector();
    // The entry, the browser's current login and the overall index: one hash tag, under the prefix.
    const keys = await redis.keys(`${keyPrefix}:*`);
    expect(keys.every((key) => key.startsWith(`${keyPrefix}:oauth:{pending}:`))).toBe(true);
    expect(keys).toContain(`${keyPrefix}:oauth:{pending}:state:${state}`);
    for (const key of keys) expect(await redis.pttl(key)).toBeGreaterThan(0);
    expect(JSON.parse((await redis.get(`${keyPrefix}:oauth:{pending}:state:${state}`))!)).toMatchObject({
      returnTo: '/orders',
    });
  });
});
