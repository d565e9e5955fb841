import { describe, expect, it } from '@jest/globals';
import {
  ConcurrencyLimiter,
  InMemoryCircuitBreakerStateStore,
  ResilienceContext,
  ResiliencePipelineRegistry,
  ResiliencePropertyKey,
  type CircuitBreakerStateStore,
  type RateLimiter,
  TokenBucketRateLimiter,
} from '../../../src/core.entry.js';
import { FakeTimeProvider } from '../../../src/testing/index.js';
import { deferred } from '../../utils/flaky.js';

const fail = (): Promise<never> => Promise.reject(new Error('down'));
const ok = (): Promise<string> => Promise.resolve('ok');

describe('registry.circuits() and circuitState()', () => {
  function registry(time: FakeTimeProvider, stateStore?: CircuitBreakerStateStore): ResiliencePipelineRegistry {
    return new ResiliencePipelineRegistry({
      timeProvider: time,
      stateStore,
      pipelines: {
        orders: { circuitBreaker: { kind: 'consecutive', failureThreshold: 3, breakDuration: 30_000 } },
        catalog: {
          circuitBreaker: {
            name: 'catalog-cb',
            kind: 'time-window',
            failureRatio: 0.5,
            minimumThroughput: 4,
            samplingDuration: 10_000,
            breakDuration: 5_000,
          },
        },
        counted: {
          circuitBreaker: { kind: 'count-window', windowSize: 4, failureRatio: 0.75, minimumThroughput: 4 },
        },
        slow: {
          circuitBreaker: {
            kind: 'slow-call',
            slowCallDuration: 100,
            failureRatio: 0.9,
            minimumThroughput: 10,
            samplingDuration: 10_000,
          },
        },
        plain: { retry: { maxRetryAttempts: 1, delay: 0 } },
      },
    });
  }

  it('describes a consecutive circuit in full, from closed to open to closed again', async () => {
    const time = new FakeTimeProvider(1_000_000);
    const r = registry(time);
    const orders = r.getPipeline('orders');
    expect(await r.circuitState('orders')).toEqual({
      pipelineName: 'orders',
      instanceKey: undefined,
      strategyName: undefined,
      circuitKey: expect.any(String),
      kind: 'consecutive',
      state: 'closed',
      throughput: 0,
      failures: 0,
      failureRatio: 0,
      threshold: 3,
      retryAfter: undefined,
      breakDuration: 0,
      lastTransitionAt: 0,
      stale: false,
    });
    await orders.executeOutcome(fail);
    await orders.executeOutcome(fail);
    expect(await r.circuitState('orders')).toMatchObject({ throughput: 2, failures: 2, failureRatio: 1 });
    time.advance(500);
    await orders.executeOutcome(fail);
    expect(await r.circuitState('orders')).toMatchObject({
      state: 'open',
      retryAfter: 30_000,
      breakDuration: 30_000,
      lastTransitionAt: 1_000_500,
    });
    time.advance(10_000);
    expect((await r.circuitState('orders'))!.retryAfter).toBe(20_000);
    time.advance(25_000); // past the break, no probe yet
    expect(await r.circuitState('orders')).toMatchObject({ state: 'open', retryAfter: 0 });
    await orders.execute(ok);
    expect(await r.circuitState('orders')).toMatchObject({
      state: 'closed',
      failures: 0,
      retryAfter: undefined,
      lastTransitionAt: 1_035_500,
    });
    await r.dispose();
  });

  it('counts a time window without the buckets that have left it', async () => {
    const time = new FakeTimeProvider(1_700_000_000_000); // a clock far from zero, as the system clock is
    const r = registry(time);
    const catalog = r.getPipeline('catalog', 'eu');
    await catalog.executeOutcome(ok);
    await catalog.executeOutcome(fail);
    expect(await r.circuitState('catalog', 'eu')).toMatchObject({
      pipelineName: 'catalog',
      instanceKey: 'eu',
      strategyName: 'catalog-cb',
      kind: 'time-window',
      throughput: 2,
      failures: 1,
      failureRatio: 0.5,
      threshold: 0.5,
    });
    time.advance(9_999);
    expect((await r.circuitState('catalog', 'eu'))!.throughput).toBe(2);
    time.advance(1);
    expect(await r.circuitState('catalog', 'eu')).toMatchObject({ throughput: 0, failures: 0, failureRatio: 0 });
    await r.dispose();
  });

  it('counts a count window and a slow-call window', async () => {
    const time = new FakeTimeProvider(0);
    const r = registry(time);
    const counted = r.getPipeline('counted');
    for (const call of [ok, fail, fail, ok, fail]) await counted.executeOutcome(call);
    expect(await r.circuitState('counted')).toMatchObject({
      kind: 'count-window',
      throughput: 4,
      failures: 3,
      failureRatio: 0.75,
      threshold: 0.75,
    });
    const slow = r.getPipeline('slow');
    await slow.executeOutcome(ok);
    const pending = slow.executeOutcome(() => time.delay(150).then(ok));
    await time.advanceAsync(150);
    await pending;
    expect(await r.circuitState('slow')).toMatchObject({
      kind: 'slow-call',
      threshold: 0.9,
      throughput: 2,
      failures: 1,
    });
    await r.dispose();
  });

  it('lists every circuit once, however many pipelines share it, and skips pipelines without one', async () => {
    const time = new FakeTimeProvider(0);
    const r = new ResiliencePipelineRegistry({
      timeProvider: time,
      pipelines: {
        a: { circuitBreaker: { kind: 'consecutive', circuitKey: 'shared' } },
        b: { circuitBreaker: { kind: 'consecutive', circuitKey: 'shared' } },
        c: { circuitBreaker: { kind: 'consecutive' } },
        plain: { timeout: 100 },
      },
    });
    r.getPipeline('a');
    r.getPipeline('b');
    r.getPipeline('c');
    r.getPipeline('plain');
    const circuits = await r.circuits();
    expect(circuits.map((c) => [c.pipelineName, c.circuitKey === 'shared'])).toEqual([
      ['a', true],
      ['c', false],
    ]);
    expect(await r.circuitState('b')).toMatchObject({ pipelineName: 'b', circuitKey: 'shared' });
    expect(await r.circuitState('plain')).toBeUndefined();
    expect(await r.circuitState('a', 'never-used')).toBeUndefined();
    expect(await r.circuitState('nope')).toBeUndefined();
    await r.dispose();
  });

  it('lists the same circuit key on two stores twice', async () => {
    const r = new ResiliencePipelineRegistry();
    const other = new InMemoryCircuitBreakerStateStore();
    r.createBuilder('A.m').addCircuitBreaker({ kind: 'consecutive', circuitKey: 'k' }).build();
    r.createBuilder('B.m').addCircuitBreaker({ kind: 'consecutive', circuitKey: 'k', stateStore: other }).build();
    expect((await r.circuits()).map((c) => c.pipelineName)).toEqual(['A.m', 'B.m']);
  });

  it('falls back to what this process saw, marked stale, when the store cannot be read', async () => {
    const inner = new InMemoryCircuitBreakerStateStore();
    let broken = false;
    const flaky: CircuitBreakerStateStore = {
      acquire: (...a) => inner.acquire(...a),
      record: (...a) => inner.record(...a),
      isolate: (...a) => inner.isolate(...a),
      close: (...a) => inner.close(...a),
      importSnapshot: (...a) => inner.importSnapshot(...a),
      exportSnapshot: (...a) => (broken ? Promise.reject(new Error('store down')) : inner.exportSnapshot(...a)),
    };
    const r = new ResiliencePipelineRegistry({
      timeProvider: new FakeTimeProvider(5_000),
      stateStore: flaky,
      pipelines: { orders: { circuitBreaker: { kind: 'consecutive', failureThreshold: 1, breakDuration: 60_000 } } },
    });
    await r.getPipeline('orders').executeOutcome(fail);
    broken = true;
    expect(await r.circuits()).toEqual([
      expect.objectContaining({
        pipelineName: 'orders',
        state: 'open',
        stale: true,
        retryAfter: undefined,
        throughput: 0,
        failures: 0,
        breakDuration: 0,
        lastTransitionAt: 0,
      }),
    ]);
    broken = false;
    expect(await r.circuitState('orders')).toMatchObject({
      state: 'open',
      stale: false,
      retryAfter: 60_000,
      lastTransitionAt: 5_000,
    });
    await r.dispose();
  });

  it('keeps every live pipeline built from createBuilder inspectable past a thousand of them', async () => {
    const r = new ResiliencePipelineRegistry();
    const kept = Array.from({ length: 1_100 }, (_, i) =>
      r.createBuilder(`M.m${i}`).addCircuitBreaker({ kind: 'consecutive' }).build(),
    );
    expect((await r.circuits()).length).toBe(kept.length);
  });
});

describe('registry.limiterStatistics()', () => {
  it('reports permits in use and the queue of a shared concurrency limiter while calls run', async () => {
    const time = new FakeTimeProvider(0);
    const registry = new ResiliencePipelineRegistry({
      timeProvider: time,
      pipelines: {
        search: { concurrencyLimiter: { permitLimit: 2, queueLimit: 5 } },
        bucket: { rateLimiter: { kind: 'token-bucket', tokenLimit: 10, replenishmentPeriod: 1_000 } },
        window: { rateLimiter: { kind: 'fixed-window', permitLimit: 7, window: 1_000, queueLimit: 3 } },
        chained: {
          rateLimiter: {
            limits: [
              { kind: 'fixed-window', permitLimit: 1, window: 1_000 },
              { kind: 'fixed-window', permitLimit: 2, window: 1_000 },
            ],
          },
        },
      },
    });
    const gates = [deferred<string>(), deferred<string>(), deferred<string>()];
    const search = registry.getPipeline('search');
    const running = gates.map((g) => search.execute(() => g.promise));
    await registry.getPipeline('bucket').execute(ok);
    await registry.getPipeline('bucket').execute(ok);
    registry.getPipeline('window');
    registry.getPipeline('chained');

    expect(registry.limiterStatistics()).toEqual([
      {
        pipelineName: 'search',
        instanceKey: undefined,
        section: 'concurrencyLimiter',
        kind: 'concurrency',
        permitLimit: 2,
        permitsInUse: 2,
        queueLength: 1,
        queueLimit: 5,
        partitions: undefined,
        distributed: false,
      },
      expect.objectContaining({
        pipelineName: 'bucket',
        section: 'rateLimiter',
        kind: 'token-bucket',
        permitLimit: 10,
        permitsInUse: 2,
        queueLength: 0,
      }),
      expect.objectContaining({
        pipelineName: 'window',
        kind: 'fixed-window',
        permitLimit: 7,
        permitsInUse: undefined,
        queueLength: 0,
        queueLimit: 3,
      }),
      expect.objectContaining({ pipelineName: 'chained', kind: 'chained', permitLimit: undefined }),
    ]);
    time.advance(1_000); // the bucket refills one token per period
    expect(registry.limiterStatistics()[1].permitsInUse).toBe(1);
    time.advance(10_000);
    expect(registry.limiterStatistics()[1].permitsInUse).toBe(0);

    for (const g of gates) g.resolve('done');
    await Promise.all(running);
    expect(registry.limiterStatistics()[0]).toMatchObject({ permitsInUse: 0, queueLength: 0 });
    await registry.dispose();
  });

  it('reports a token bucket of one own without the figures it cannot know', async () => {
    const time = new FakeTimeProvider();
    const registry = new ResiliencePipelineRegistry({ timeProvider: time });
    const bucket = new TokenBucketRateLimiter({ tokenLimit: 3, replenishmentPeriod: 1_000 }, time);
    await registry.getOrAddPipeline('own', (b) => b.addRateLimiter({ limiter: bucket })).execute(ok);
    registry.getOrAddPipeline('nothing', () => undefined);
    expect(registry.limiterStatistics()).toEqual([
      expect.objectContaining({ pipelineName: 'own', kind: 'custom', permitLimit: undefined, permitsInUse: undefined }),
    ]);
    expect(await registry.circuits()).toEqual([]);
    await registry.dispose();
  });

  it('reports partitions of a partitioned limit', async () => {
    const User = new ResiliencePropertyKey<string>('user');
    const registry = new ResiliencePipelineRegistry();
    const pipeline = registry.getOrAddPipeline('per-user', (b) =>
      b.addRateLimiter({
        kind: 'fixed-window',
        permitLimit: 1,
        window: 1_000,
        partitionKey: (ctx) => ctx.properties.get(User) ?? 'anonymous',
      }),
    );
    for (const user of ['ann', 'bob', 'ann']) {
      const context = new ResilienceContext();
      context.properties.set(User, user);
      await pipeline.executeOutcome(ok, context);
    }
    expect(registry.limiterStatistics()).toEqual([
      expect.objectContaining({ pipelineName: 'per-user', section: 'strategy', kind: 'custom', partitions: 2 }),
    ]);
    await registry.dispose();
  });

  it('skips the strategies that are no limiters, and reads only the figures a limiter gives as numbers', async () => {
    const registry = new ResiliencePipelineRegistry();
    // A limiter of one's own whose members of those names are something else.
    const odd = {
      acquire: () => ({ acquired: true, release: () => undefined }),
      isIdle: () => true,
      dispose: () => undefined,
      queuedCount: () => 2,
      partitionCount: '3',
    } as RateLimiter;
    registry.getOrAddPipeline('mixed', (b) =>
      b.addTimeout(1_000).addRateLimiter({ limiter: odd }).addRetry({ maxRetryAttempts: 1, delay: 0 }),
    );
    expect(registry.limiterStatistics()).toEqual([
      {
        pipelineName: 'mixed',
        instanceKey: undefined,
        section: 'strategy',
        kind: 'custom',
        permitLimit: undefined,
        permitsInUse: undefined,
        queueLength: 0,
        queueLimit: undefined,
        partitions: undefined,
        distributed: false,
      },
    ]);
    await registry.dispose();
  });

  it('reports limiters of pipelines built by code once each, a limiter of one own as custom', async () => {
    const registry = new ResiliencePipelineRegistry();
    const own: RateLimiter = {
      acquire: () => ({ acquired: true, release: () => undefined }),
      isIdle: () => true,
      dispose: () => undefined,
    };
    const shared = new ConcurrencyLimiter({ permitLimit: 4 });
    registry.getOrAddPipeline('coded', (b) =>
      b.addConcurrencyLimiter(3).addRateLimiter({ limiter: own }).addRateLimiter({ limiter: shared }),
    );
    registry.createBuilder('Orders.find', 'eu').addRateLimiter({ limiter: shared }).build();
    expect(registry.limiterStatistics()).toEqual([
      expect.objectContaining({ pipelineName: 'coded', section: 'strategy', kind: 'concurrency', permitLimit: 3 }),
      {
        pipelineName: 'coded',
        instanceKey: undefined,
        section: 'strategy',
        kind: 'custom',
        permitLimit: undefined,
        permitsInUse: undefined,
        queueLength: 0,
        queueLimit: undefined,
        partitions: undefined,
        distributed: false,
      },
      expect.objectContaining({ pipelineName: 'coded', kind: 'concurrency', permitLimit: 4, permitsInUse: 0 }),
    ]);
    await registry.dispose();
  });
});
