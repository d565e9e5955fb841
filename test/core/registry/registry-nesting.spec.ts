import { describe, expect, it } from '@jest/globals';
import {
  BrokenCircuitError,
  ResiliencePipeline,
  ResiliencePipelineBuilder,
  ResiliencePipelineRegistry,
  ResilienceValidationError,
} from '../../../src/core.entry.js';
import { FakeTimeProvider } from '../../../src/testing/index.js';
import { RecordingListener } from '../../utils/recording.listener.js';
import { deferred } from '../../utils/flaky.js';

function failing(): { calls: number; fn: () => Promise<never> } {
  const state = {
    calls: 0,
    fn: () => {
      state.calls++;
      return Promise.reject(new Error('down'));
    },
  };
  return state;
}

describe('a registered pipeline nested in another', () => {
  const orders = {
    retry: { maxRetryAttempts: 2, delay: 0 },
    circuitBreaker: { failureRatio: 1, minimumThroughput: 100 },
    timeout: '5s',
  };

  it('runs its strategies and describes them', async () => {
    const registry = new ResiliencePipelineRegistry({ pipelines: { orders } });
    const outer = new ResiliencePipelineBuilder().addPipeline(registry.getPipeline('orders')).build();
    expect(outer.describe().map((d) => d.type)).toEqual(['retry', 'circuit-breaker', 'timeout']);

    const call = failing();
    await expect(outer.execute(call.fn)).rejects.toThrow('down');
    expect(call.calls).toBe(3); // the original call and its two retries
  });

  it('follows the registered pipeline through reloads', async () => {
    const registry = new ResiliencePipelineRegistry({ pipelines: { orders } });
    const outer = new ResiliencePipelineBuilder()
      .addTimeout(10_000)
      .addPipeline(registry.getPipeline('orders'))
      .build();

    await registry.reload('orders', { retry: { maxRetryAttempts: 4, delay: 0 } });
    expect(outer.describe().map((d) => d.type)).toEqual(['timeout', 'retry']);
    const call = failing();
    await expect(outer.execute(call.fn)).rejects.toThrow('down');
    expect(call.calls).toBe(5);
  });

  it('is the same object under its name before and after a reload', async () => {
    const registry = new ResiliencePipelineRegistry({ pipelines: { orders } });
    const held = registry.getPipeline('orders');
    await registry.reload('orders', { retry: { maxRetryAttempts: 1, delay: 0 } });
    expect(registry.getPipeline('orders')).toBe(held);
    expect(held).toBeInstanceOf(ResiliencePipeline);
    expect(held.describe().map((d) => d.type)).toEqual(['retry']);
  });

  it('shares its circuit: an opening seen through the outer pipeline is the named pipeline’s', async () => {
    const registry = new ResiliencePipelineRegistry({
      pipelines: { payments: { circuitBreaker: { kind: 'consecutive', failureThreshold: 2 } } },
    });
    const outer = new ResiliencePipelineBuilder().addPipeline(registry.getPipeline('payments')).build();
    const call = failing();
    await expect(outer.execute(call.fn)).rejects.toThrow('down');
    await expect(outer.execute(call.fn)).rejects.toThrow('down');
    await expect(registry.getPipeline('payments').execute(() => 'ok')).rejects.toBeInstanceOf(BrokenCircuitError);
    const circuits = await registry.circuits();
    expect(circuits.map((c) => [c.pipelineName, c.state])).toEqual([['payments', 'open']]);
  });
});

describe('a nested pipeline reports its own executions, under its own name', () => {
  const executions = (listener: RecordingListener) =>
    listener.events
      .filter((e) => e.eventName === 'PipelineExecuting' || e.eventName === 'PipelineExecuted')
      .map((e) => [e.eventName, e.source.pipelineName, e.context.operationKey, e.severity]);

  it('a registered pipeline: its own PipelineExecuting and PipelineExecuted inside the outer one, with the outer call’s operation key', async () => {
    const time = new FakeTimeProvider();
    const listener = new RecordingListener();
    const registry = new ResiliencePipelineRegistry({
      timeProvider: time,
      telemetryListeners: [listener],
      pipelines: { orders: { retry: { maxRetryAttempts: 1, delay: 0 } } },
    });
    const outer = registry.createBuilder('Orders.place').addPipeline(registry.getPipeline('orders')).build();
    await expect(outer.execute(() => 'placed', { operationKey: 'Orders.place' })).resolves.toBe('placed');
    expect(executions(listener)).toEqual([
      ['PipelineExecuting', 'Orders.place', 'Orders.place', 'debug'],
      ['PipelineExecuting', 'orders', 'Orders.place', 'debug'],
      ['PipelineExecuted', 'orders', 'Orders.place', 'information'],
      ['PipelineExecuted', 'Orders.place', 'Orders.place', 'information'],
    ]);

    listener.events.length = 0;
    let calls = 0;
    const slowFailure = async () => {
      calls++;
      await time.delay(30);
      throw new Error('down');
    };
    const call = outer.execute(slowFailure, { operationKey: 'Orders.place' });
    const settled = expect(call).rejects.toThrow('down');
    await time.runAllAsync();
    await settled;
    expect(calls).toBe(2);
    const inner = listener.events.find((e) => e.eventName === 'PipelineExecuted' && e.source.pipelineName === 'orders');
    expect(inner?.severity).toBe('error');
    // Its duration is the nested run's: both attempts, measured on the registry's clock.
    expect((inner?.arguments as { duration: number }).duration).toBe(60);
  });

  it('follows a reload that replaces its strategies; one that no listener hears reports nothing', async () => {
    const listener = new RecordingListener();
    const registry = new ResiliencePipelineRegistry({
      telemetryListeners: [listener],
      pipelines: { orders: { timeout: '5s' } },
    });
    const outer = new ResiliencePipelineBuilder().addPipeline(registry.getPipeline('orders')).build();
    await registry.reload('orders', { retry: { maxRetryAttempts: 1, delay: 0 } });
    await outer.execute(() => 1);
    expect(executions(listener).map(([event, pipeline]) => `${event} ${pipeline}`)).toEqual([
      'PipelineExecuting orders',
      'PipelineExecuted orders',
    ]);

    const quiet = new ResiliencePipelineRegistry({ pipelines: { orders: { timeout: '5s' } } });
    const nested = new ResiliencePipelineBuilder({ telemetryListeners: [listener] })
      .addPipeline(quiet.getPipeline('orders'))
      .build();
    listener.events.length = 0;
    await nested.execute(() => 1);
    expect(executions(listener).map(([event, pipeline]) => `${event} ${pipeline}`)).toEqual([
      'PipelineExecuting undefined',
      'PipelineExecuted undefined',
    ]);
  });

  it('a pipeline built on its own reports its executions where it is nested; one no listener hears reports nothing', async () => {
    const listener = new RecordingListener();
    const reporting = new ResiliencePipelineBuilder({ name: 'inner', telemetryListeners: [listener] })
      .addTimeout(5_000)
      .build();
    const outer = new ResiliencePipelineBuilder({ name: 'outer' }).addPipeline(reporting).build();
    await outer.execute(() => 1, { operationKey: 'k' });
    // Only its own listener hears it, with the outer call's operation key.
    expect(executions(listener)).toEqual([
      ['PipelineExecuting', 'inner', 'k', 'debug'],
      ['PipelineExecuted', 'inner', 'k', 'information'],
    ]);
    listener.events.length = 0;
    await expect(outer.execute(() => Promise.reject(new Error('down')))).rejects.toThrow('down');
    expect(executions(listener).map(([event, pipeline, , severity]) => `${event} ${pipeline} ${severity}`)).toEqual([
      'PipelineExecuting inner debug',
      'PipelineExecuted inner error',
    ]);
    expect(outer.describe().map((d) => d.type)).toEqual(['timeout']);

    const silent = new ResiliencePipelineBuilder({ name: 'inner' }).addTimeout(5_000).build();
    const heard = new RecordingListener();
    const flat = new ResiliencePipelineBuilder({ name: 'outer', telemetryListeners: [heard] })
      .addPipeline(silent)
      .build();
    await flat.execute(() => 1);
    expect(flat.describe().map((d) => d.type)).toEqual(['timeout']);
    expect(executions(heard).map(([event, pipeline]) => `${event} ${pipeline}`)).toEqual([
      'PipelineExecuting outer',
      'PipelineExecuted outer',
    ]);
  });
});

describe('one configuration section of a registered pipeline lent to another', () => {
  it('runs the section’s own strategy: one circuit, reported under the named pipeline', async () => {
    const listener = new RecordingListener();
    const registry = new ResiliencePipelineRegistry({
      telemetryListeners: [listener],
      pipelines: {
        payments: { retry: { maxRetryAttempts: 5 }, circuitBreaker: { kind: 'consecutive', failureThreshold: 2 } },
      },
    });
    const named = registry.getPipeline('payments');
    const charge = registry.createBuilder('Payments.charge').addPipeline(named, { section: 'circuitBreaker' }).build();
    const refund = registry.createBuilder('Payments.refund').addPipeline(named, { section: 'circuitBreaker' }).build();
    expect(charge.describe().map((d) => d.type)).toEqual(['circuit-breaker']);

    const call = failing();
    await expect(refund.execute(call.fn, { operationKey: 'Payments.refund' })).rejects.toThrow('down');
    await expect(refund.execute(call.fn, { operationKey: 'Payments.refund' })).rejects.toThrow('down');
    expect(call.calls).toBe(2); // no retry: only the section was lent
    const rejected = charge.execute(() => 'charged', { operationKey: 'Payments.charge' });
    await expect(rejected).rejects.toBeInstanceOf(BrokenCircuitError);
    await expect(rejected).rejects.toMatchObject({ source: { pipelineName: 'payments' } });

    const circuits = await registry.circuits();
    expect(circuits.map((c) => [c.pipelineName, c.state])).toEqual([['payments', 'open']]);
    expect((await registry.circuitState('payments'))?.state).toBe('open');

    const breakerEvents = listener.events.filter((e) => e.source.strategyType === 'circuit-breaker');
    expect(new Set(breakerEvents.map((e) => e.source.pipelineName))).toEqual(new Set(['payments']));
    expect(new Set(breakerEvents.map((e) => e.context.operationKey))).toEqual(
      new Set(['Payments.refund', 'Payments.charge']),
    );
  });

  it('follows reloads; a call in flight finishes with the options it started with, in the same circuit', async () => {
    const time = new FakeTimeProvider();
    const registry = new ResiliencePipelineRegistry({
      timeProvider: time,
      pipelines: { quotes: { retry: { maxRetryAttempts: 1, delay: 0 }, circuitBreaker: { kind: 'consecutive' } } },
    });
    const method = registry
      .createBuilder('Quotes.get')
      .addPipeline(registry.getPipeline('quotes'), { section: 'retry' })
      .addPipeline(registry.getPipeline('quotes'), { section: 'circuitBreaker' })
      .build();

    const gate = deferred<void>();
    let inFlightAttempts = 0;
    const inFlight = method.execute(async () => {
      inFlightAttempts++;
      await gate.promise;
      throw new Error('slow failure');
    });
    await Promise.resolve();
    await registry.reload('quotes', {
      retry: { maxRetryAttempts: 3, delay: 0 },
      circuitBreaker: { kind: 'consecutive', failureThreshold: 10 },
    });
    gate.resolve();
    await expect(inFlight).rejects.toThrow('slow failure');
    expect(inFlightAttempts).toBe(2); // the old retry: one retry

    const call = failing();
    await expect(method.execute(call.fn)).rejects.toThrow('down');
    expect(call.calls).toBe(4); // the new retry: three retries
    const [circuit] = await registry.circuits();
    expect(circuit.pipelineName).toBe('quotes');
    expect(circuit.failures).toBeGreaterThanOrEqual(4); // both calls' failures in the one circuit
  });

  it('refuses a section the pipeline does not have', () => {
    const registry = new ResiliencePipelineRegistry({ pipelines: { quotes: { retry: { maxRetryAttempts: 2 } } } });
    const builder = new ResiliencePipelineBuilder().addPipeline(registry.getPipeline('quotes'), {
      section: 'circuitBreaker',
    });
    expect(() => builder.build()).toThrow(ResilienceValidationError);
    expect(() =>
      new ResiliencePipelineBuilder().addPipeline(registry.getPipeline('quotes'), { section: 'timeout' }).build(),
    ).toThrow(/configuration section of the pipeline/);
  });
});
