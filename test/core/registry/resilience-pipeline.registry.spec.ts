import { describe, expect, it } from '@jest/globals';
import {
  BrokenCircuitError,
  isResilienceError,
  isResilienceValidationError,
  isUnknownPipelineError,
  OptionsValidator,
  RateLimiterRejectedError,
  ResiliencePipelineRegistry,
  ResilienceValidationError,
  UnknownPipelineError,
} from '../../../src/core.entry.js';
import { FakeTimeProvider } from '../../../src/testing/index.js';

const failing = (): never => {
  throw new Error('down');
};

function registryWithOrders(time = new FakeTimeProvider()): ResiliencePipelineRegistry {
  return new ResiliencePipelineRegistry({
    timeProvider: time,
    pipelines: {
      orders: {
        circuitBreaker: { kind: 'consecutive', failureThreshold: 1, breakDuration: 10_000 },
        concurrencyLimiter: 1,
      },
    },
  });
}

describe('ResiliencePipelineRegistry.applyConfig', () => {
  it('adds the sections of a config to a builder, resolving predicate names', async () => {
    const registry = registryWithOrders();
    const builder = registry.createBuilder<unknown>('Orders.list');
    const issues = new OptionsValidator('Orders.list');
    registry.applyConfig(builder, { retry: { maxRetryAttempts: 2, delay: 0, shouldHandle: 'all-errors' } }, issues);
    expect(issues.isValid).toBe(true);
    let calls = 0;
    await expect(
      builder.build().execute(() => {
        calls++;
        throw new Error('down');
      }),
    ).rejects.toThrow('down');
    expect(calls).toBe(3);
    await registry.dispose();
  });

  it('reports an unknown predicate name under the section path', () => {
    const registry = registryWithOrders();
    const issues = new OptionsValidator('Orders.list');
    registry.applyConfig(registry.createBuilder('Orders.list'), { retry: { shouldHandle: 'no-such' } }, issues);
    expect(issues.problems.map((p) => p.path)).toEqual(['Orders.list.retry.shouldHandle']);
  });

  it('shares the circuit and the limiters of the named pipeline with sharedWith', async () => {
    const registry = registryWithOrders();
    const builder = registry.createBuilder<unknown>('Orders.list');
    const issues = new OptionsValidator('Orders.list');
    const { circuitBreaker, concurrencyLimiter } = registry.getPipelineConfig('orders')!;
    registry.applyConfig(builder, { circuitBreaker, concurrencyLimiter }, issues, { sharedWith: 'orders' });
    const method = builder.build();

    // The named pipeline opens its circuit; the method sees it open.
    await expect(registry.getPipeline('orders').execute(failing)).rejects.toThrow('down');
    await expect(method.execute(() => 'ok')).rejects.toBeInstanceOf(BrokenCircuitError);

    // Closing the circuit by hand through the named pipeline's control closes the method's too.
    await registry.circuitControl('orders').close();
    await expect(method.execute(() => 'ok')).resolves.toBe('ok');

    // One permit, shared: while the method holds it, the named pipeline is rejected.
    let release!: () => void;
    const held = method.execute(() => new Promise<void>((resolve) => (release = resolve)));
    await expect(registry.getPipeline('orders').execute(() => 'ok')).rejects.toBeInstanceOf(RateLimiterRejectedError);
    release();
    await held;
    await registry.dispose();
  });

  it('keeps inline sections to themselves without sharedWith', async () => {
    const registry = registryWithOrders();
    const builder = registry.createBuilder<unknown>('Orders.list');
    const { circuitBreaker } = registry.getPipelineConfig('orders')!;
    registry.applyConfig(builder, { circuitBreaker }, new OptionsValidator(''));
    const method = builder.build();
    await expect(registry.getPipeline('orders').execute(failing)).rejects.toThrow('down');
    await expect(method.execute(() => 'ok')).resolves.toBe('ok');
    await registry.dispose();
  });
});

describe('registry errors', () => {
  it('throws an UnknownPipelineError, recognised by its guard, for an unknown name', () => {
    const registry = registryWithOrders();
    let error: unknown;
    try {
      registry.getPipeline('payments');
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(UnknownPipelineError);
    expect(isUnknownPipelineError(error)).toBe(true);
    expect(isResilienceValidationError(error)).toBe(false);
    expect(isResilienceError(error)).toBe(true);
    expect((error as Error).name).toBe('UnknownPipelineError');
    expect((error as UnknownPipelineError).knownNames).toEqual(['orders']);
  });

  it('throws a ResilienceValidationError, recognised by its guard, for an invalid configuration', () => {
    let error: unknown;
    try {
      new ResiliencePipelineRegistry({ pipelines: { orders: { retry: { maxRetryAttempts: -1 } } } });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ResilienceValidationError);
    expect(isResilienceValidationError(error)).toBe(true);
    expect(isUnknownPipelineError(error)).toBe(false);
    expect((error as Error).name).toBe('ResilienceValidationError');
  });

  it('recognises the errors by brand, not by class identity (two copies of the package)', () => {
    const copy = Object.create(UnknownPipelineError.prototype) as object;
    expect(isUnknownPipelineError(copy)).toBe(true);
    expect(isUnknownPipelineError(new Error('UnknownPipelineError'))).toBe(false);
  });
});
