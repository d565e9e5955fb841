import { describe, expect, it } from '@jest/globals';
import {
  isResilienceValidationError,
  PIPELINE_SECTION_ORDER,
  ResiliencePipelineBuilder,
  retryRegistration,
  STRATEGY_CATALOG,
  STRATEGY_SECTIONS,
  timeoutRegistration,
  TimeoutRejectedError,
  type ResilienceEvent,
  type StrategyDefinition,
} from '../../../src/core.entry.js';
import { FakeTimeProvider } from '../../../src/testing/index.js';

describe('STRATEGY_CATALOG: one composition order', () => {
  it('is the order of configuration sections, outermost first', () => {
    const sections = STRATEGY_CATALOG.filter((line) => line.registration).map((line) => line.name);
    expect(sections).toEqual([
      'fallback',
      'totalTimeout',
      'rateLimiter',
      'concurrencyLimiter',
      'adaptiveConcurrency',
      'hedging',
      'retry',
      'adaptiveThrottling',
      'circuitBreaker',
      'timeout',
      'chaosLatency',
      'chaosFault',
    ]);
    // The deprecated names of the same order.
    expect(PIPELINE_SECTION_ORDER).toEqual(sections);
    expect(STRATEGY_SECTIONS).toBe(STRATEGY_CATALOG);
  });

  it('maps each section to the registration of its strategy', () => {
    const types = Object.fromEntries(STRATEGY_CATALOG.map((s) => [s.name, s.registration?.type]));
    expect(types).toEqual({
      fallback: 'fallback',
      totalTimeout: 'timeout',
      pipeline: undefined,
      rateLimiter: 'rate-limiter',
      concurrencyLimiter: 'concurrency-limiter',
      adaptiveConcurrency: 'adaptive-concurrency',
      hedging: 'hedging',
      retry: 'retry',
      adaptiveThrottling: 'adaptive-throttling',
      circuitBreaker: 'circuit-breaker',
      timeout: 'timeout',
      chaosLatency: 'chaos-latency',
      chaosFault: 'chaos-fault',
    });
  });
});

describe('ResiliencePipelineBuilder.add(registration, options)', () => {
  it('adds the strategy a registration describes, as the built-in add… methods do', async () => {
    const time = new FakeTimeProvider();
    const pipeline = new ResiliencePipelineBuilder({ timeProvider: time })
      .add(timeoutRegistration, { timeout: 1_000 })
      .build();
    const call = pipeline.execute(({ signal }) => time.delay(5_000, signal));
    const settled = expect(call).rejects.toBeInstanceOf(TimeoutRejectedError);
    await time.advanceAsync(1_000);
    await settled;
  });

  it('validates the options with the registration, under the registration type', () => {
    let error: unknown;
    try {
      new ResiliencePipelineBuilder().add(retryRegistration, { maxRetryAttempts: -1 }).build();
    } catch (e) {
      error = e;
    }
    expect(isResilienceValidationError(error)).toBe(true);
    expect((error as Error).message).toContain('strategies[0] (retry).maxRetryAttempts: -1 must be');
  });

  it('takes a strategy defined outside the package, reporting under its type', async () => {
    const events: ResilienceEvent[] = [];
    const doubling: StrategyDefinition<{ factor: number }> = {
      type: 'multiplier',
      events: [],
      validate: (v, o) => v.number('factor', o.factor, { min: 1 }),
      create: (o) => ({ execute: async (next, context) => ((await next(context)) as number) * o.factor }),
    };
    const pipeline = new ResiliencePipelineBuilder<number>({
      name: 'math',
      telemetryListeners: [{ write: (e) => events.push(e) }],
    })
      .add(doubling, { factor: 3 })
      .build();
    await expect(pipeline.execute(() => 14)).resolves.toBe(42);
    expect(() => new ResiliencePipelineBuilder().add(doubling, { factor: 0 }).build()).toThrow(
      'strategies[0] (multiplier).factor: 0 must be',
    );
    expect(events.map((e) => e.source.strategyType)).toEqual(['pipeline', 'pipeline']);
  });

  it('reports only the telemetry events its registration lists', async () => {
    const time = new FakeTimeProvider();
    const events: ResilienceEvent[] = [];
    const pipeline = new ResiliencePipelineBuilder({
      timeProvider: time,
      telemetryListeners: [{ write: (e) => events.push(e) }],
    })
      .addRetry({ maxRetryAttempts: 1, delay: 0 })
      .addTimeout(100)
      .build();
    const call = pipeline.execute(({ signal }) => time.delay(1_000, signal));
    const settled = expect(call).rejects.toBeInstanceOf(TimeoutRejectedError);
    await time.advanceAsync(100);
    await time.advanceAsync(100);
    await settled;
    const byType = new Map(STRATEGY_CATALOG.map((s) => [s.registration?.type, s.registration?.events]));
    const strategyEvents = events.filter((e) => e.source.strategyType !== 'pipeline');
    expect(new Set(strategyEvents.map((e) => e.eventName))).toEqual(
      new Set(['ExecutionAttempt', 'OnRetry', 'OnRetryGiveUp', 'OnTimeout']),
    );
    for (const event of strategyEvents) expect(byType.get(event.source.strategyType)).toContain(event.eventName);
  });
});
