import { describe, expect, it } from '@jest/globals';
import {
  handleAllErrors,
  ResiliencePipeline,
  ResiliencePipelineBuilder,
  ResiliencePipelineRegistry,
  TimeoutRejectedError,
} from '../../src/core.entry.js';
import {
  FakeTimeProvider,
  flushPromises,
  getPipelineDescriptor,
  runWithFakeTime,
  waitForCircuitState,
} from '../../src/testing/index.js';

describe('getPipelineDescriptor', () => {
  it('lists a built pipeline’s strategies outermost first, with type, name and the options given', () => {
    const pipeline = new ResiliencePipelineBuilder<string>()
      .addRetry({ name: 'orders-retry', maxRetryAttempts: 2, delay: 100 })
      .addCircuitBreaker({ kind: 'consecutive', failureThreshold: 3 })
      .addTimeout(1_000)
      .build();
    const descriptor = getPipelineDescriptor(pipeline);
    expect(descriptor.strategies).toEqual([
      { type: 'retry', name: 'orders-retry', options: { name: 'orders-retry', maxRetryAttempts: 2, delay: 100 } },
      { type: 'circuit-breaker', name: undefined, options: { kind: 'consecutive', failureThreshold: 3 } },
      { type: 'timeout', name: undefined, options: { timeout: 1_000 } },
    ]);
    expect(descriptor.firstStrategy?.type).toBe('retry');
    expect(descriptor.isReloadable).toBe(false);
    // The descriptor is a copy: changing it changes nothing in the pipeline.
    expect(Object.isFrozen(descriptor.strategies[0].options)).toBe(false);
    expect(pipeline.describe()).toEqual([
      { type: 'retry', name: 'orders-retry' },
      { type: 'circuit-breaker', name: undefined },
      { type: 'timeout', name: undefined },
    ]);
  });

  it('describes an empty pipeline and nested pipelines in their place', () => {
    expect(getPipelineDescriptor(ResiliencePipeline.empty)).toEqual({
      strategies: [],
      firstStrategy: undefined,
      isReloadable: false,
    });
    const inner = new ResiliencePipelineBuilder().addTimeout(500).build();
    const outer = new ResiliencePipelineBuilder().addRetry({ delay: 0 }).addPipeline(inner).build();
    expect(getPipelineDescriptor(outer).strategies.map((s) => [s.type, s.options])).toEqual([
      ['retry', { delay: 0 }],
      ['timeout', { timeout: 500 }],
    ]);
  });

  it('describes a registry pipeline from configuration, strings read, and follows its reloads', async () => {
    const registry = new ResiliencePipelineRegistry();
    registry.addPipelines({ orders: { retry: { maxRetryAttempts: '2', delay: '1s' }, timeout: '5s' } });
    const pipeline = registry.getPipeline('orders');
    const descriptor = getPipelineDescriptor(pipeline);
    expect(descriptor.isReloadable).toBe(true);
    expect(descriptor.strategies.map((s) => s.type)).toEqual(['retry', 'timeout']);
    expect(descriptor.strategies[0].options).toMatchObject({ maxRetryAttempts: 2, delay: 1_000 });
    expect(descriptor.strategies[1].options).toMatchObject({ timeout: 5_000 });

    await registry.reload('orders', { timeout: 2_000 });
    expect(registry.getPipeline('orders')).toBe(pipeline);
    expect(getPipelineDescriptor(pipeline).strategies).toEqual([
      { type: 'timeout', name: undefined, options: expect.objectContaining({ timeout: 2_000 }) },
    ]);
  });
});

describe('runWithFakeTime', () => {
  it('settles a retried call by running the clock’s timers, without advancing a computed total', async () => {
    const time = new FakeTimeProvider();
    let calls = 0;
    const pipeline = new ResiliencePipelineBuilder<string>({ timeProvider: time })
      .addRetry({ maxRetryAttempts: 3, backoffType: 'exponential', delay: 2_000, shouldHandle: handleAllErrors })
      .build();
    const result = await runWithFakeTime(time, () =>
      pipeline.execute(async () => {
        if (++calls < 4) throw new Error('flaky');
        return 'ok';
      }),
    );
    expect(result).toBe('ok');
    expect(calls).toBe(4);
    expect(time.now()).toBe(2_000 + 4_000 + 8_000);
    expect(time.pendingTimerCount).toBe(0);
  });

  it('rejects with the work’s error (a timeout on the fake clock)', async () => {
    const time = new FakeTimeProvider();
    const pipeline = new ResiliencePipelineBuilder({ timeProvider: time }).addTimeout(1_500).build();
    const hanging = pipeline.execute(
      ({ signal }) => new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason))),
    );
    await expect(runWithFakeTime(time, hanging)).rejects.toBeInstanceOf(TimeoutRejectedError);
    expect(time.now()).toBe(1_500);
  });

  it('gives up instead of hanging: past maxTime, past maxTimers, or with nothing scheduled', async () => {
    const time = new FakeTimeProvider();
    const never = new Promise<never>(() => undefined);
    await expect(runWithFakeTime(time, never, { idleTimeout: 20 })).rejects.toThrow(/nothing is scheduled/);

    const ticking = new Promise<never>(() => {
      const tick = () => time.setTimeout(tick, 1_000);
      tick();
    });
    await expect(runWithFakeTime(time, ticking, { maxTime: 10_000 })).rejects.toThrow(/10000 ms of fake time/);
    await expect(runWithFakeTime(time, ticking, { maxTimers: 5 })).rejects.toThrow(/more than 5 timers/);
  });
});

describe('waitForCircuitState', () => {
  it('waits on the fake clock for a circuit to open, and for the probe after its break to close it', async () => {
    const time = new FakeTimeProvider();
    const registry = new ResiliencePipelineRegistry({ timeProvider: time });
    registry.addPipelines({
      payments: { circuitBreaker: { kind: 'consecutive', failureThreshold: 1, breakDuration: 5_000 } },
    });
    const pipeline = registry.getPipeline('payments');
    await pipeline.executeOutcome(() => Promise.reject(new Error('down')));

    const open = await waitForCircuitState(registry, 'payments', 'open', { timeProvider: time });
    expect(open).toMatchObject({ pipelineName: 'payments', state: 'open', retryAfter: 5_000 });

    // The break ends on the clock, but the circuit stays open in its store until a call probes it.
    const probe = (async () => {
      await waitForCircuitState(registry, 'payments', 'closed', { timeProvider: time, timeout: 10_000 });
      return time.now();
    })();
    time.advance(5_000);
    await pipeline.execute(() => 'recovered');
    expect(await probe).toBeGreaterThanOrEqual(5_000);
  });

  it('names the state it saw when the timeout passes first', async () => {
    const time = new FakeTimeProvider();
    const registry = new ResiliencePipelineRegistry({ timeProvider: time });
    registry.addPipelines({ payments: { circuitBreaker: { kind: 'consecutive', failureThreshold: 5 } } });
    await registry.getPipeline('payments').executeOutcome(() => 'fine');
    await expect(
      waitForCircuitState(registry, 'payments', 'open', { timeProvider: time, timeout: 1_000 }),
    ).rejects.toThrow('the circuit of "payments" is not open after 1000 ms; it is closed');
    await expect(
      waitForCircuitState(registry, 'unknown', 'open', { timeProvider: time, timeout: 100 }),
    ).rejects.toThrow(/it has no circuit/);
  });
});

describe('flushPromises', () => {
  it('lets every queued continuation run', async () => {
    const seen: number[] = [];
    void Promise.resolve()
      .then(() => seen.push(1))
      .then(() => seen.push(2));
    await flushPromises();
    expect(seen).toEqual([1, 2]);
  });
});
