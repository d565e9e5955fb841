import 'reflect-metadata';
import { afterAll, afterEach, describe, expect, it } from '@jest/globals';
import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import type { Redis } from 'ioredis';
import {
  CircuitBreaker,
  InMemoryCircuitBreakerStateStore,
  IsolatedCircuitError,
  ResilienceModule,
  ResiliencePipelineRegistry,
  type CircuitBreakerStateStore,
} from '../../src/index.js';
import { RedisCircuitBreakerStateStore } from '../../src/redis/index.js';
import { FakeTimeProvider } from '../../src/testing/index.js';
import { ready, redisClient, uniquePrefix } from '../redis/redis-test.utils.js';

const fail = (): Promise<never> => Promise.reject(new Error('down'));
const ok = (): Promise<string> => Promise.resolve('ok');

const clients: Redis[] = [];
afterAll(async () => {
  await Promise.all(clients.map((c) => c.quit()));
});

const stores: Record<string, (time: FakeTimeProvider) => Promise<CircuitBreakerStateStore>> = {
  'in-memory': () => Promise.resolve(new InMemoryCircuitBreakerStateStore()),
  redis: async (timeProvider) => {
    const client = redisClient();
    clients.push(client);
    await ready(client);
    return new RedisCircuitBreakerStateStore({ client, keyPrefix: uniquePrefix('inspection'), timeProvider });
  },
};

/** The Redis store sends successes in batches (every `flushInterval`); reading waits for none. */
async function settled(registry: ResiliencePipelineRegistry): Promise<void> {
  const store = registry.stateStore as Partial<RedisCircuitBreakerStateStore>;
  if (store.flush) await store.flush();
}

for (const [storeName, makeStore] of Object.entries(stores)) {
  describe(`registry.circuits() and circuitState() on the ${storeName} store`, () => {
    let registry: ResiliencePipelineRegistry | undefined;
    afterEach(async () => {
      await registry?.dispose();
      registry = undefined;
    });

    async function makeRegistry(time: FakeTimeProvider): Promise<ResiliencePipelineRegistry> {
      registry = new ResiliencePipelineRegistry({
        timeProvider: time,
        stateStore: await makeStore(time),
        pipelines: {
          orders: { circuitBreaker: { kind: 'consecutive', failureThreshold: 3, breakDuration: 30_000 } },
          catalog: {
            circuitBreaker: {
              kind: 'time-window',
              failureRatio: 0.5,
              minimumThroughput: 4,
              samplingDuration: 10_000,
              breakDuration: 5_000,
            },
          },
          plain: { retry: { maxRetryAttempts: 1, delay: 0 } },
        },
      });
      return registry;
    }

    it('lists every circuit with its owner, kind, state and window figures', async () => {
      const time = new FakeTimeProvider(1_000_000);
      const r = await makeRegistry(time);
      await r.getPipeline('orders').executeOutcome(fail);
      await r.getPipeline('orders').executeOutcome(fail);
      const catalog = r.getPipeline('catalog', 'eu-west');
      await catalog.executeOutcome(ok);
      await catalog.executeOutcome(fail);
      r.getPipeline('plain');
      await settled(r);

      const circuits = await r.circuits();
      expect(circuits.map((c) => `${c.pipelineName}:${c.instanceKey ?? ''}`).sort()).toEqual([
        'catalog:eu-west',
        'orders:',
      ]);
      const orders = circuits.find((c) => c.pipelineName === 'orders')!;
      expect(orders).toMatchObject({
        kind: 'consecutive',
        state: 'closed',
        failures: 2,
        threshold: 3,
        retryAfter: undefined,
        stale: false,
      });
      const eu = circuits.find((c) => c.pipelineName === 'catalog')!;
      expect(eu).toMatchObject({ kind: 'time-window', throughput: 2, failures: 1, failureRatio: 0.5, threshold: 0.5 });
    });

    it('reads an opened circuit with its retry-after counting down, then half-open and closed', async () => {
      const time = new FakeTimeProvider(2_000_000);
      const r = await makeRegistry(time);
      for (let i = 0; i < 3; i++) await r.getPipeline('orders').executeOutcome(fail);
      expect(await r.circuitState('orders')).toMatchObject({
        state: 'open',
        retryAfter: 30_000,
        breakDuration: 30_000,
      });
      time.advance(10_000);
      expect((await r.circuitState('orders'))!.retryAfter).toBe(20_000);
      time.advance(20_000);
      await r.getPipeline('orders').execute(ok);
      expect(await r.circuitState('orders')).toMatchObject({ state: 'closed', failures: 0, retryAfter: undefined });
    });

    it('tells instances apart and answers undefined for a pipeline without a breaker or an unused key', async () => {
      const time = new FakeTimeProvider(3_000_000);
      const r = await makeRegistry(time);
      const us = r.getPipeline('catalog', 'us');
      for (let i = 0; i < 4; i++) await us.executeOutcome(fail);
      await r.getPipeline('catalog', 'eu').executeOutcome(ok);
      expect((await r.circuitState('catalog', 'us'))!.state).toBe('open');
      expect((await r.circuitState('catalog', 'eu'))!.state).toBe('closed');
      expect(await r.circuitState('catalog', 'asia')).toBeUndefined();
      r.getPipeline('plain');
      expect(await r.circuitState('plain')).toBeUndefined();
      expect(await r.circuitState('nope')).toBeUndefined();
    });

    it('isolates and closes a named circuit by hand, for instances built before and after', async () => {
      const time = new FakeTimeProvider(4_000_000);
      const r = await makeRegistry(time);
      await r.getPipeline('orders').execute(ok);
      expect(await r.isolateCircuit('orders')).toBe(1);
      expect((await r.circuitState('orders'))!.state).toBe('isolated');
      await expect(r.getPipeline('orders').execute(ok)).rejects.toBeInstanceOf(IsolatedCircuitError);
      expect(await r.closeCircuit('orders')).toBe(1);
      await expect(r.getPipeline('orders').execute(ok)).resolves.toBe('ok');
      expect(await r.isolateCircuit('plain')).toBe(0);
    });
  });
}

describe('registry.limiterStatistics()', () => {
  it('reports permits in use and the queue of a shared concurrency limiter while calls run', async () => {
    const time = new FakeTimeProvider(0);
    const registry = new ResiliencePipelineRegistry({
      timeProvider: time,
      pipelines: {
        search: { concurrencyLimiter: { permitLimit: 2, queueLimit: 5 } },
        bucket: { rateLimiter: { kind: 'token-bucket', tokenLimit: 10, replenishmentPeriod: 1_000 } },
      },
    });
    const releases: (() => void)[] = [];
    const hold = () => new Promise<string>((resolve) => releases.push(() => resolve('ok')));
    const search = registry.getPipeline('search');
    const running = [search.execute(hold), search.execute(hold), search.execute(hold)];
    await registry.getPipeline('bucket').execute(ok);
    await registry.getPipeline('bucket').execute(ok);
    await Promise.resolve();

    const stats = registry.limiterStatistics();
    expect(stats.find((s) => s.pipelineName === 'search')).toMatchObject({
      section: 'concurrencyLimiter',
      kind: 'concurrency',
      permitLimit: 2,
      permitsInUse: 2,
      queueLength: 1,
      queueLimit: 5,
      distributed: false,
    });
    expect(stats.find((s) => s.pipelineName === 'bucket')).toMatchObject({
      kind: 'token-bucket',
      permitLimit: 10,
      permitsInUse: 2,
      queueLength: 0,
    });

    while (releases.length) {
      releases.shift()!();
      await new Promise((r) => setImmediate(r));
    }
    await Promise.all(running);
    expect(registry.limiterStatistics().find((s) => s.pipelineName === 'search')).toMatchObject({
      permitsInUse: 0,
      queueLength: 0,
    });
    await registry.dispose();
  });

  it('reports limiters and circuits of pipelines built by code', async () => {
    const registry = new ResiliencePipelineRegistry();
    const pipeline = registry.getOrAddPipeline('coded', (b) =>
      b.addConcurrencyLimiter(3).addCircuitBreaker({ name: 'cb', failureThreshold: 2, kind: 'consecutive' }),
    );
    await pipeline.executeOutcome(fail);
    const built = registry.createBuilder('Orders.find').addCircuitBreaker({ kind: 'consecutive' }).build();
    await built.executeOutcome(fail);
    expect(registry.limiterStatistics()).toEqual([
      expect.objectContaining({ pipelineName: 'coded', section: 'strategy', kind: 'concurrency', permitLimit: 3 }),
    ]);
    const circuits = await registry.circuits();
    expect(circuits.map((c) => [c.pipelineName, c.strategyName, c.failures])).toEqual([
      ['coded', 'cb', 1],
      ['Orders.find', undefined, 1],
    ]);
    expect(await registry.isolateCircuit('Orders.find')).toBe(1);
    expect((await registry.circuitState('Orders.find'))!.state).toBe('isolated');
    await registry.dispose();
  });
});

describe('registry.circuits() when the store cannot be read', () => {
  it('falls back to what this process last saw, marked stale, and never throws', async () => {
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
    const registry = new ResiliencePipelineRegistry({
      timeProvider: new FakeTimeProvider(0),
      stateStore: flaky,
      pipelines: { orders: { circuitBreaker: { kind: 'consecutive', failureThreshold: 1, breakDuration: 60_000 } } },
    });
    await registry.getPipeline('orders').executeOutcome(fail);
    broken = true;
    expect(await registry.circuits()).toEqual([
      expect.objectContaining({ pipelineName: 'orders', state: 'open', stale: true, retryAfter: undefined }),
    ]);
    broken = false;
    expect(await registry.circuitState('orders')).toMatchObject({ state: 'open', stale: false, retryAfter: 60_000 });
    await registry.dispose();
  });
});

@Injectable()
class InventoryService {
  calls = 0;

  @CircuitBreaker({ kind: 'consecutive', failureThreshold: 1, breakDuration: 60_000 })
  reserve(): Promise<string> {
    this.calls++;
    return Promise.reject(new Error('out of stock service'));
  }
}

describe('registry.circuits() in a Nest app', () => {
  it('lists the circuit of a decorated method under Class.method, and isolates it', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [ResilienceModule.forRoot({ logging: false })],
      providers: [InventoryService],
    }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    const registry = app.get(ResiliencePipelineRegistry);
    const inventory = app.get(InventoryService);
    await expect(inventory.reserve()).rejects.toThrow('out of stock service');
    expect(await registry.circuits()).toEqual([
      expect.objectContaining({ pipelineName: 'InventoryService.reserve', state: 'open', failures: 1 }),
    ]);
    expect(await registry.isolateCircuit('InventoryService.reserve')).toBe(1);
    await expect(inventory.reserve()).rejects.toBeInstanceOf(IsolatedCircuitError);
    expect(inventory.calls).toBe(1);
    await app.close();
  });
});
