import { describe, expect, it, jest } from '@jest/globals';
import { outcomeFromError, outcomeFromValue, ResiliencePipelineBuilder } from '../../../src/core.entry.js';
import { FakeTimeProvider } from '../../../src/testing/index.js';
import { seededRandom } from '../../utils/flaky.js';

describe('chaos strategies', () => {
  it('injects faults at the configured rate, within statistical bounds (seeded)', async () => {
    const runs = 10_000;
    for (const rate of [0.05, 0.3, 0.8]) {
      const pipeline = new ResiliencePipelineBuilder({ random: seededRandom(42) })
        .addChaosFault({ injectionRate: rate, fault: new Error('injected') })
        .build();
      let injected = 0;
      for (let i = 0; i < runs; i++) await pipeline.execute(() => 'ok').catch(() => injected++);
      const sigma = Math.sqrt(runs * rate * (1 - rate));
      expect(Math.abs(injected - runs * rate)).toBeLessThan(4 * sigma);
    }
  });

  it('never injects when disabled, always at rate 1, and asks the generators per call', async () => {
    const disabled = new ResiliencePipelineBuilder()
      .addChaosFault({ injectionRate: 1, enabled: false, fault: new Error('x') })
      .build();
    await expect(disabled.execute(() => 'ok')).resolves.toBe('ok');
    const always = new ResiliencePipelineBuilder()
      .addChaosFault({ injectionRate: 1, fault: new Error('always') })
      .build();
    await expect(always.execute(() => 'ok')).rejects.toThrow('always');
    const onFaultInjected = jest.fn<() => void>();
    const byKey = new ResiliencePipelineBuilder()
      .addChaosFault({
        enabledGenerator: ({ context }) => context.operationKey === 'chaos-me',
        injectionRateGenerator: async () => 1,
        faultGenerator: ({ context }) => new Error(`fault for ${context.operationKey}`),
        onFaultInjected,
      })
      .build();
    await expect(byKey.execute(() => 'ok', { operationKey: 'safe' })).resolves.toBe('ok');
    await expect(byKey.execute(() => 'ok', { operationKey: 'chaos-me' })).rejects.toThrow('fault for chaos-me');
    expect(onFaultInjected).toHaveBeenCalledTimes(1);
  });

  it('injects latency through the clock, cancellably', async () => {
    const time = new FakeTimeProvider();
    const pipeline = new ResiliencePipelineBuilder({ timeProvider: time })
      .addChaosLatency({ injectionRate: 1, latency: 500 })
      .build();
    const result = pipeline.execute(() => 'late');
    await time.advanceAsync(499);
    expect(time.pendingTimerCount).toBe(1);
    await time.advanceAsync(1);
    await expect(result).resolves.toBe('late');
    const controller = new AbortController();
    const cancelled = pipeline.execute(() => 'never', { signal: controller.signal });
    await time.advanceAsync(100);
    controller.abort(new Error('stop'));
    await expect(cancelled).rejects.toThrow('stop');
    expect(time.pendingTimerCount).toBe(0);
  });

  it('injects outcomes (values and errors) without calling', async () => {
    const fn = jest.fn(() => 'real');
    const value = new ResiliencePipelineBuilder<string>()
      .addChaosOutcome({ injectionRate: 1, outcome: outcomeFromValue('fake') })
      .build();
    await expect(value.execute(fn)).resolves.toBe('fake');
    const error = new ResiliencePipelineBuilder<string>()
      .addChaosOutcome({
        injectionRate: 1,
        outcomeGenerator: () => outcomeFromError(Object.assign(new Error('503'), { status: 503 })),
      })
      .build();
    await expect(error.execute(fn)).rejects.toMatchObject({ status: 503 });
    expect(fn).not.toHaveBeenCalled();
  });

  it('runs a behaviour before the call', async () => {
    const order: string[] = [];
    const pipeline = new ResiliencePipelineBuilder()
      .addChaosBehavior({ injectionRate: 1, behavior: () => void order.push('behavior') })
      .build();
    await pipeline.execute(() => void order.push('call'));
    expect(order).toEqual(['behavior', 'call']);
  });

  it('validates its options', () => {
    expect(() =>
      new ResiliencePipelineBuilder()
        .addChaosFault({ injectionRate: 2 })
        .addChaosOutcome({ outcome: 'nope' as never })
        .addChaosBehavior({})
        .build(),
    ).toThrow(
      /injectionRate: 2 must be a number >= 0 and <= 1[\s\S]*fault: undefined is required[\s\S]*outcome: "nope" must be an outcome[\s\S]*behavior: undefined is required/,
    );
  });
});
