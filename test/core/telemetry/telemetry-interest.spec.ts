import { describe, expect, it } from '@jest/globals';
import {
  getElapsedTime,
  getTimestamp,
  ResilienceContext,
  ResiliencePipelineBuilder,
  StrategyTelemetry,
  SystemTimeProvider,
  TimeProvider,
  type ResilienceEvent,
  type TelemetryListener,
  type TimerHandle,
} from '../../../src/core.entry.js';
import { FakeTimeProvider } from '../../../src/testing/index.js';

const source = { pipelineName: 'p', pipelineInstanceName: undefined, strategyName: undefined, strategyType: 'retry' };

/** A listener recording what it receives, wanting what `wants` says. */
function recorder(
  wants?: TelemetryListener['wants'],
  wantsDuration?: TelemetryListener['wantsDuration'],
): TelemetryListener & { events: ResilienceEvent[]; asked: string[] } {
  const events: ResilienceEvent[] = [];
  const asked: string[] = [];
  const listener: TelemetryListener & { events: ResilienceEvent[]; asked: string[] } = {
    events,
    asked,
    write: (event) => void events.push(event),
  };
  if (wants)
    listener.wants = (name, severity) => {
      asked.push(`${name}/${severity}`);
      return wants(name, severity);
    };
  if (wantsDuration) listener.wantsDuration = wantsDuration;
  return listener;
}

/** A callback that takes `ms` on the fake clock, then resolves (or rejects while `failures` last). */
function slowCall(time: FakeTimeProvider, ms: number, failures = 0): () => Promise<string> {
  let left = failures;
  return async () => {
    time.advance(ms);
    if (left-- > 0) throw new Error('boom');
    return 'ok';
  };
}

describe('telemetry interest', () => {
  it('routes each event only to the listeners that want it, by severity, and asks once per (event, severity)', () => {
    const errorsOnly = recorder((_, severity) => severity === 'error');
    const timeouts = recorder((name) => name === 'OnTimeout');
    const all = recorder();
    const telemetry = new StrategyTelemetry(source, [errorsOnly, timeouts, all]);
    const context = new ResilienceContext();
    telemetry.report('OnTimeout', 'error', context, { timeout: 1 });
    telemetry.report('OnTimeout', 'error', context, { timeout: 2 });
    telemetry.report('OnRetryGiveUp', 'error', context, {
      outcome: { ok: false, error: new Error('x') },
      attemptNumber: 0,
      reason: 'max-attempts',
    });
    telemetry.report('OnCircuitHalfOpened', 'warning', context, {});
    expect(errorsOnly.events.map((e) => e.eventName)).toEqual(['OnTimeout', 'OnTimeout', 'OnRetryGiveUp']);
    expect(timeouts.events.map((e) => e.eventName)).toEqual(['OnTimeout', 'OnTimeout']);
    expect(all.events).toHaveLength(4);
    // Asked once per event and severity (five severities per event), never per report.
    expect(errorsOnly.asked.filter((a) => a.startsWith('OnTimeout/'))).toHaveLength(5);
    expect(telemetry.wants('OnTimeout')).toBe(true);
    expect(new StrategyTelemetry(source, [timeouts]).wants('OnRetry')).toBe(false);
    expect(new StrategyTelemetry(source, [errorsOnly]).wants('OnRetry', 'warning')).toBe(false);
    expect(new StrategyTelemetry(source, [errorsOnly]).wants('OnRetryGiveUp', 'error')).toBe(true);
  });

  it('treats a listener whose wants throws as wanting everything', () => {
    const broken = recorder(() => {
      throw new Error('broken');
    });
    const telemetry = new StrategyTelemetry(source, [broken]);
    telemetry.report('OnTimeout', 'error', new ResilienceContext(), { timeout: 1 });
    expect(broken.events).toHaveLength(1);
  });

  it('a pipeline whose listeners want no per-call event never builds one, and still reports what they want', async () => {
    const time = new FakeTimeProvider();
    const listener = recorder((name) => name === 'OnRetry' || name === 'OnRetryGiveUp');
    const pipeline = new ResiliencePipelineBuilder({ timeProvider: time, telemetryListeners: [listener] })
      .addRetry({ maxRetryAttempts: 1, delay: 0 })
      .build();
    await expect(pipeline.execute(slowCall(time, 1))).resolves.toBe('ok');
    expect(listener.events).toEqual([]);
    await expect(pipeline.execute(slowCall(time, 2, 5))).rejects.toThrow('boom');
    expect(listener.events.map((e) => e.eventName)).toEqual(['OnRetry', 'OnRetryGiveUp']);
    // The first attempt ran on the fast path and is still timed, since the listener reads OnRetry's duration.
    expect(listener.events[0].arguments).toMatchObject({ attemptNumber: 0, duration: 2 });
  });

  it('does not time attempts for a listener that does not read durations', async () => {
    const time = new FakeTimeProvider();
    const listener = recorder(
      (name) => name === 'OnRetry',
      () => false,
    );
    const pipeline = new ResiliencePipelineBuilder({ timeProvider: time, telemetryListeners: [listener] })
      .addRetry({ maxRetryAttempts: 1, delay: 0 })
      .build();
    await expect(pipeline.execute(slowCall(time, 2, 1))).resolves.toBe('ok');
    expect(listener.events.map((e) => [e.eventName, (e.arguments as { duration: number }).duration])).toEqual([
      ['OnRetry', 0],
    ]);
  });

  it('keeps every event for a listener without wants', async () => {
    const time = new FakeTimeProvider();
    const listener = recorder();
    const pipeline = new ResiliencePipelineBuilder({ timeProvider: time, telemetryListeners: [listener] })
      .addRetry({ maxRetryAttempts: 1, delay: 0 })
      .build();
    await pipeline.execute(slowCall(time, 1));
    expect(listener.events.map((e) => e.eventName)).toEqual([
      'PipelineExecuting',
      'ExecutionAttempt',
      'PipelineExecuted',
    ]);
  });
});

describe('high-resolution durations', () => {
  it('records sub-millisecond attempt and pipeline durations from the fake clock', async () => {
    const time = new FakeTimeProvider(1_000);
    const listener = recorder();
    const pipeline = new ResiliencePipelineBuilder({ timeProvider: time, telemetryListeners: [listener] })
      .addRetry({ maxRetryAttempts: 1, delay: 0 })
      .build();
    await pipeline.execute(slowCall(time, 0.25, 1));
    const durations = listener.events
      .filter((e) => e.eventName === 'ExecutionAttempt' || e.eventName === 'PipelineExecuted')
      .map((e) => [e.eventName, (e.arguments as { duration: number }).duration]);
    expect(durations).toEqual([
      ['ExecutionAttempt', 0.25],
      ['ExecutionAttempt', 0.25],
      ['PipelineExecuted', 0.5],
    ]);
  });

  it('moves the fake timestamp with advance and advanceAsync', async () => {
    const time = new FakeTimeProvider(5_000);
    const start = getTimestamp(time);
    time.advance(0.125);
    await time.advanceAsync(0.5);
    expect(getElapsedTime(time, start)).toBe(0.625);
    expect(getElapsedTime(time, start, start + 3)).toBe(3);
  });

  it('falls back to now() for a time provider without getTimestamp', () => {
    class WallClockOnly extends TimeProvider {
      value = 10;
      now(): number {
        return this.value;
      }
      setTimeout(): TimerHandle {
        return undefined;
      }
      clearTimeout(): void {}
    }
    const clock = new WallClockOnly();
    const start = getTimestamp(clock);
    clock.value = 17;
    expect(getElapsedTime(clock, start)).toBe(7);
  });

  it('the system clock is monotonic and fractional', () => {
    const clock = new SystemTimeProvider();
    const a = clock.getTimestamp();
    const b = clock.getTimestamp();
    expect(b).toBeGreaterThanOrEqual(a);
    expect(typeof a).toBe('number');
  });
});
