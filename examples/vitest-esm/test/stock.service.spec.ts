import 'reflect-metadata';
import { Test, type TestingModule } from '@nestjs/testing';
import {
  BrokenCircuitError,
  CIRCUIT_BREAKER_STATE_STORE,
  RESILIENCE_TIME_PROVIDER,
  ResiliencePipelineRegistry,
} from 'nest-resilience';
import {
  FakeRedisStateStore,
  FakeTimeProvider,
  getPipelineDescriptor,
  runWithFakeTime,
  waitForCircuitState,
} from 'nest-resilience/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { InventoryApi, StockModule, StockService } from '../src/stock.service.js';

/** An upstream that fails `failures` times, then answers `count`. */
function flaky(failures: number, count = 3): InventoryApi & { calls: number } {
  return {
    calls: 0,
    count() {
      this.calls += 1;
      return this.calls <= failures ? Promise.reject(new Error('inventory down')) : Promise.resolve(count);
    },
  };
}

const started: TestingModule[] = [];

/** One instance of the application, on the test's clock and circuit store. */
async function instance(api: InventoryApi, time: FakeTimeProvider, store = new FakeRedisStateStore()) {
  const moduleRef = await Test.createTestingModule({ imports: [StockModule] })
    .overrideProvider(InventoryApi)
    .useValue(api)
    .overrideProvider(RESILIENCE_TIME_PROVIDER)
    .useValue(time)
    .overrideProvider(CIRCUIT_BREAKER_STATE_STORE)
    .useValue(store)
    .compile();
  started.push(moduleRef);
  await moduleRef.init(); // decorators take effect when the application initialises
  return moduleRef;
}

afterEach(async () => {
  await Promise.all(started.splice(0).map((moduleRef) => moduleRef.close()));
});

describe('StockService', () => {
  it('runs the inventory pipeline the configuration describes', async () => {
    const app = await instance(flaky(0), new FakeTimeProvider());
    const descriptor = getPipelineDescriptor(app.get(ResiliencePipelineRegistry).getPipeline('inventory'));
    expect(descriptor.strategies.map((strategy) => strategy.type)).toEqual(['circuit-breaker']);
    expect(descriptor.strategies[0].options).toMatchObject({ kind: 'consecutive', failureThreshold: 3 });
  });

  it('retries twice, 500 ms apart, on the fake clock', async () => {
    const time = new FakeTimeProvider();
    const api = flaky(2);
    const app = await instance(api, time);
    await expect(runWithFakeTime(time, () => app.get(StockService).inStock('sku-1'))).resolves.toBe(true);
    expect(api.calls).toBe(3);
    expect(time.now()).toBe(1_000);
  });

  it('shares the circuit between two instances of the application on one (fake) Redis', async () => {
    const time = new FakeTimeProvider();
    const redis = new FakeRedisStateStore({ keyPrefix: 'stock-api' });
    const api = flaky(Infinity);
    const [a, b] = [await instance(api, time, redis), await instance(api, time, redis)];
    // Three failures on instance A (the call and its two retries) open the circuit both use.
    await expect(runWithFakeTime(time, () => a.get(StockService).inStock('sku-1'))).rejects.toThrow('inventory down');
    await waitForCircuitState(b.get(ResiliencePipelineRegistry), 'inventory', 'open', { timeProvider: time });
    await expect(b.get(StockService).inStock('sku-1')).rejects.toBeInstanceOf(BrokenCircuitError);
    expect(api.calls).toBe(3);
    expect(redis.keys()).toEqual(['stock-api:cb:{inventory/circuit-breaker}']);
  });
});
