import { describe, expect, it, jest } from '@jest/globals';
import {
  DEFAULT_CHAOS_LATENCY,
  DEFAULT_INJECTION_RATE,
  outcomeFromValue,
  ResiliencePipelineBuilder,
  ResiliencePipelineRegistry,
  type ResilienceEvent,
} from '../../../src/core.entry.js';
import { FakeTimeProvider } from '../../../src/testing/index.js';
import { strategyProblems } from '../../utils/validation-problems.js';

const constant = (value: number) => () => value;

function faults(options: Parameters<ResiliencePipelineBuilder['addChaosFault']>[0], random?: () => number) {
  const events: ResilienceEvent[] = [];
  const pipeline = new ResiliencePipelineBuilder({
    random,
    telemetryListeners: [{ write: (e) => void (e.eventName === 'OnChaosInjected' && events.push(e)) }],
  })
    .addChaosFault({ fault: new Error('injected'), ...options })
    .build();
  const run = () =>
    pipeline
      .execute(() => 'called')
      .then(
        (v) => v,
        (e: Error) => e.message,
      );
  return { run, events };
}

describe('when chaos injects', () => {
  it('injects when random() is below the rate, not at it', async () => {
    expect(await faults({ injectionRate: 0.5 }, constant(0.4999)).run()).toBe('injected');
    expect(await faults({ injectionRate: 0.5 }, constant(0.5)).run()).toBe('called');
  });

  it('never injects at rate 0 and always at rate 1, without asking random()', async () => {
    const random = jest.fn(() => 0);
    expect(await faults({ injectionRate: 0 }, random).run()).toBe('called');
    expect(await faults({ injectionRate: 1 }, random).run()).toBe('injected');
    expect(random).not.toHaveBeenCalled();
  });

  it('injects at 0.1 % by default', async () => {
    expect(DEFAULT_INJECTION_RATE).toBe(0.001);
    expect(await faults({}, constant(0.000_999)).run()).toBe('injected');
    expect(await faults({}, constant(0.001)).run()).toBe('called');
  });

  it('prefers its own random source to the pipeline one', async () => {
    expect(await faults({ injectionRate: 0.5, random: constant(0.9) }, constant(0)).run()).toBe('called');
    expect(await faults({ injectionRate: 0.5, random: constant(0) }, constant(0.9)).run()).toBe('injected');
  });

  it('asks the enabled generator first, and the rate only when enabled', async () => {
    const rate = jest.fn(() => 1);
    let enabled = false;
    const { run } = faults({ enabledGenerator: () => enabled, injectionRateGenerator: rate });
    expect(await run()).toBe('called');
    expect(rate).not.toHaveBeenCalled();
    enabled = true;
    expect(await run()).toBe('injected');
    expect(rate).toHaveBeenCalledTimes(1);
  });

  it('hands the generators the call context', async () => {
    const byKey = (rate: number) => ({
      injectionRateGenerator: ({ context }: { context: { operationKey?: string } }) =>
        context.operationKey === 'chaos' ? rate : 0,
    });
    const pipeline = new ResiliencePipelineBuilder()
      .addChaosFault({ fault: new Error('injected'), ...byKey(1) })
      .build();
    await expect(pipeline.execute(() => 'called', { operationKey: 'chaos' })).rejects.toThrow('injected');
    await expect(pipeline.execute(() => 'called', { operationKey: 'calm' })).resolves.toBe('called');
  });

  it('combines a generator with the static options', async () => {
    expect(await faults({ enabled: false, injectionRateGenerator: () => 1 }).run()).toBe('called');
    expect(await faults({ injectionRateGenerator: () => 1 }).run()).toBe('injected');
    expect(await faults({ enabledGenerator: async () => true, injectionRate: 1 }).run()).toBe('injected');
    expect(await faults({ enabledGenerator: () => true, injectionRate: 0.5 }, constant(0.6)).run()).toBe('called');
    expect(await faults({ enabledGenerator: () => true }, constant(0.000_5)).run()).toBe('injected');
    expect(await faults({ injectionRateGenerator: () => 0 }, constant(0)).run()).toBe('called');
    expect(await faults({ enabledGenerator: () => false, injectionRate: 1 }).run()).toBe('called');
    expect(await faults({ injectionRateGenerator: () => 0, injectionRate: 1 }).run()).toBe('called');
  });

  it('reports each injection with its kind, and nothing for a call it lets through', async () => {
    const injected = faults({ injectionRate: 1, name: 'boom' });
    await injected.run();
    expect(injected.events.map((e) => [e.eventName, e.severity, e.arguments, e.source.strategyName])).toEqual([
      ['OnChaosInjected', 'information', { kind: 'fault' }, 'boom'],
    ]);
    const passed = faults({ injectionRate: 0 });
    await passed.run();
    expect(passed.events.filter((e) => e.eventName === 'OnChaosInjected')).toEqual([]);
  });
});

describe('chaos fault', () => {
  it('throws the generated fault, after telling onFaultInjected', async () => {
    const order: string[] = [];
    const pipeline = new ResiliencePipelineBuilder()
      .addChaosFault({
        injectionRate: 1,
        faultGenerator: ({ context }) => new Error(`for ${context.operationKey}`),
        onFaultInjected: async ({ fault, context }) => {
          await Promise.resolve();
          order.push(`told ${(fault as Error).message} ${context.operationKey}`);
        },
      })
      .build();
    await expect(pipeline.execute(() => 'x', { operationKey: 'k' })).rejects.toThrow('for k');
    expect(order).toEqual(['told for k k']);
  });

  it('from configuration: a fault given wins over a message', async () => {
    const given = new Error('given');
    const registry = new ResiliencePipelineRegistry({
      pipelines: { p: { chaosFault: { injectionRate: 1, message: 'from message', fault: given } } },
    });
    await expect(registry.getPipeline('p').execute(() => 1)).rejects.toBe(given);
  });
});

describe('chaos latency', () => {
  function latency(options: Parameters<ResiliencePipelineBuilder['addChaosLatency']>[0]) {
    const time = new FakeTimeProvider();
    const events: ResilienceEvent[] = [];
    const pipeline = new ResiliencePipelineBuilder({
      timeProvider: time,
      telemetryListeners: [{ write: (e) => void (e.eventName === 'OnChaosInjected' && events.push(e)) }],
    })
      .addChaosLatency({ injectionRate: 1, ...options })
      .build();
    return { time, pipeline, events };
  }

  it('waits 30 s by default', async () => {
    expect(DEFAULT_CHAOS_LATENCY).toBe(30_000);
    const { time, pipeline, events } = latency({});
    const result = pipeline.execute(() => 'late');
    await time.advanceAsync(0);
    expect(time.pendingDelays).toEqual([30_000]);
    await time.advanceAsync(30_000);
    await expect(result).resolves.toBe('late');
    expect(events.map((e) => [e.eventName, e.severity, e.arguments])).toEqual([
      ['OnChaosInjected', 'information', { kind: 'latency' }],
    ]);
  });

  it('takes the latency from its generator and tells onLatencyInjected before waiting', async () => {
    const told: number[] = [];
    const { time, pipeline } = latency({
      latencyGenerator: async ({ context }) => (context.operationKey === 'slow' ? 200 : 100),
      onLatencyInjected: ({ latency: ms }) => void told.push(ms),
    });
    const result = pipeline.execute(() => 'ok', { operationKey: 'slow' });
    await time.advanceAsync(0);
    expect(told).toEqual([200]);
    expect(time.pendingDelays).toEqual([200]);
    await time.advanceAsync(200);
    await expect(result).resolves.toBe('ok');
  });

  it('adds nothing, and reports nothing, for a latency of zero or less', async () => {
    for (const ms of [0, -5]) {
      const onLatencyInjected = jest.fn<() => void>();
      const { time, pipeline, events } = latency({ latencyGenerator: () => ms, onLatencyInjected });
      await expect(pipeline.execute(() => 'now')).resolves.toBe('now');
      expect(time.pendingTimerCount).toBe(0);
      expect(events).toEqual([]);
      expect(onLatencyInjected).not.toHaveBeenCalled();
    }
  });
});

describe('chaos outcome', () => {
  it('lets the call run when the generator declines, and waits for an asynchronous one', async () => {
    const onOutcomeInjected = jest.fn<(args: { outcome: unknown }) => void>();
    const events: ResilienceEvent[] = [];
    let inject = false;
    const pipeline = new ResiliencePipelineBuilder<string>({
      telemetryListeners: [{ write: (e) => void (e.eventName === 'OnChaosInjected' && events.push(e)) }],
    })
      .addChaosOutcome({
        injectionRate: 1,
        outcomeGenerator: ({ context }) =>
          inject ? Promise.resolve(outcomeFromValue(`fake for ${context.operationKey}`)) : undefined,
        onOutcomeInjected,
      })
      .build();
    await expect(pipeline.execute(() => 'real')).resolves.toBe('real');
    expect(onOutcomeInjected).not.toHaveBeenCalled();
    expect(events).toEqual([]);
    inject = true;
    await expect(pipeline.execute(() => 'real', { operationKey: 'k' })).resolves.toBe('fake for k');
    expect(onOutcomeInjected).toHaveBeenCalledWith(
      expect.objectContaining({ outcome: { ok: true, value: 'fake for k' } }),
    );
    expect(events.map((e) => [e.severity, e.arguments])).toEqual([['information', { kind: 'outcome' }]]);
  });
});

describe('chaos behaviour', () => {
  it('tells onBehaviorInjected, runs the behaviour to its end, then calls', async () => {
    const order: string[] = [];
    const events: ResilienceEvent[] = [];
    const pipeline = new ResiliencePipelineBuilder({
      telemetryListeners: [{ write: (e) => void (e.eventName === 'OnChaosInjected' && events.push(e)) }],
    })
      .addChaosBehavior({
        injectionRate: 1,
        onBehaviorInjected: ({ context }) => void order.push(`told ${context.operationKey}`),
        behavior: async ({ context }) => {
          await Promise.resolve();
          order.push(`behaviour ${context.operationKey}`);
        },
      })
      .build();
    await pipeline.execute(() => void order.push('call'), { operationKey: 'k' });
    expect(order).toEqual(['told k', 'behaviour k', 'call']);
    expect(events.map((e) => [e.severity, e.arguments])).toEqual([['information', { kind: 'behavior' }]]);
  });
});

describe('chaos options', () => {
  const fn = () => undefined;

  it('checks the common options of every chaos strategy', () => {
    expect(
      strategyProblems('chaos-latency', (b) =>
        b.addChaosLatency({
          name: '',
          injectionRate: -0.1,
          injectionRateGenerator: 1,
          enabled: 'yes',
          enabledGenerator: 2,
          random: 3,
          extra: true,
        } as never),
      ),
    ).toEqual([
      { path: 'extra', rule: 'is not a known option' },
      { path: 'name', rule: 'must be a non-empty string' },
      { path: 'injectionRate', rule: 'must be a number >= 0 and <= 1' },
      { path: 'injectionRateGenerator', rule: 'must be a function' },
      { path: 'enabled', rule: 'must be a boolean' },
      { path: 'enabledGenerator', rule: 'must be a function' },
      { path: 'random', rule: 'must be a function' },
    ]);
    expect(strategyProblems('chaos-latency', (b) => b.addChaosLatency({ injectionRate: 1.01 }))).toEqual([
      { path: 'injectionRate', rule: 'must be a number >= 0 and <= 1' },
    ]);
  });

  it('checks the options of each kind', () => {
    expect(
      strategyProblems('chaos-latency', (b) =>
        b.addChaosLatency({ latency: -1, latencyGenerator: 1, onLatencyInjected: 2 } as never),
      ),
    ).toEqual([
      { path: 'latency', rule: 'must be a number >= 0 and <= 2147483647' },
      { path: 'latencyGenerator', rule: 'must be a function' },
      { path: 'onLatencyInjected', rule: 'must be a function' },
    ]);
    expect(
      strategyProblems('chaos-fault', (b) => b.addChaosFault({ faultGenerator: 1, onFaultInjected: 2 } as never)),
    ).toEqual([
      { path: 'faultGenerator', rule: 'must be a function' },
      { path: 'onFaultInjected', rule: 'must be a function' },
    ]);
    expect(strategyProblems('chaos-fault', (b) => b.addChaosFault({ fault: 1, messag: 'x' } as never))).toEqual([
      { path: 'messag', rule: 'is not a known option' }, // the builder takes no message: nothing to hint at
    ]);
    expect(strategyProblems('chaos-fault', (b) => b.addChaosFault({ message: 'x' } as never))).toEqual([
      { path: 'message', rule: 'must be a string' },
    ]);
    expect(strategyProblems('chaos-fault', (b) => b.addChaosFault({}))).toEqual([
      { path: 'fault', rule: 'is required (or give faultGenerator)' },
    ]);
    expect(strategyProblems('chaos-fault', (b) => b.addChaosFault({ faultGenerator: fn }))).toEqual([]);
    expect(strategyProblems('chaos-fault', (b) => b.addChaosFault({ fault: 'any value' }))).toEqual([]);
    expect(
      strategyProblems('chaos-outcome', (b) =>
        b.addChaosOutcome({ outcomeGenerator: 1, onOutcomeInjected: 2 } as never),
      ),
    ).toEqual([
      { path: 'outcomeGenerator', rule: 'must be a function' },
      { path: 'onOutcomeInjected', rule: 'must be a function' },
    ]);
    expect(strategyProblems('chaos-outcome', (b) => b.addChaosOutcome({}))).toEqual([
      { path: 'outcome', rule: 'is required (or give outcomeGenerator)' },
    ]);
    for (const outcome of [null, { ok: 'yes' }, 5]) {
      expect(strategyProblems('chaos-outcome', (b) => b.addChaosOutcome({ outcome } as never))).toEqual([
        { path: 'outcome', rule: 'must be an outcome: { ok: true, value } or { ok: false, error }' },
      ]);
    }
    expect(strategyProblems('chaos-outcome', (b) => b.addChaosOutcome({ outcome: { ok: false, error: 1 } }))).toEqual(
      [],
    );
    expect(strategyProblems('chaos-outcome', (b) => b.addChaosOutcome({ outcomeGenerator: fn }))).toEqual([]);
    expect(
      strategyProblems('chaos-behavior', (b) => b.addChaosBehavior({ behavior: 1, onBehaviorInjected: 2 } as never)),
    ).toEqual([
      { path: 'onBehaviorInjected', rule: 'must be a function' },
      { path: 'behavior', rule: 'must be a function' },
    ]);
    expect(strategyProblems('chaos-behavior', (b) => b.addChaosBehavior({}))).toEqual([
      { path: 'behavior', rule: 'is required' },
    ]);
  });
});
