import { describe, expect, it } from '@jest/globals';
import {
  AdaptiveThrottlingRejectedError,
  AdaptiveThrottlingStateProvider,
  adaptiveThrottlingRegistration,
  BrokenCircuitError,
  DEFAULT_ADAPTIVE_THROTTLING_K,
  DEFAULT_ADAPTIVE_THROTTLING_WINDOW,
  handleOverloadRejection,
  isAdaptiveThrottlingRejectedError,
  isOverloadRejection,
  isRateLimiterRejectedError,
  RateLimiterRejectedError,
  ResilienceContext,
  ResiliencePipeline,
  ResiliencePipelineBuilder,
  ResiliencePipelineRegistry,
  ResilienceValidationError,
  type AdaptiveThrottlingStrategyOptions,
} from '../../../src/core.entry.js';
import { FakeTimeProvider } from '../../../src/testing/index.js';
import { settle } from '../../utils/flaky.js';
import { RecordingListener } from '../../utils/recording.listener.js';
import { strategyProblems } from '../../utils/validation-problems.js';

const unavailable = () => Object.assign(new Error('Service Unavailable'), { status: 503 });

function throttled(options: AdaptiveThrottlingStrategyOptions = {}, random: () => number = () => 0.5) {
  const time = new FakeTimeProvider();
  const listener = new RecordingListener();
  const stateProvider = new AdaptiveThrottlingStateProvider();
  const pipeline = new ResiliencePipelineBuilder({ timeProvider: time, telemetryListeners: [listener], random })
    .addAdaptiveThrottling({ stateProvider, ...options })
    .build();
  return { time, listener, stateProvider, pipeline };
}

/** Runs `count` calls that the dependency refuses (503), never throttled (random is close to 1). */
async function refuse(pipeline: ResiliencePipeline, count: number) {
  for (let i = 0; i < count; i++) await settle(pipeline.execute(() => Promise.reject(unavailable())));
}

describe('adaptive throttling', () => {
  it('lets everything through while the dependency accepts: the reject probability stays 0', async () => {
    const { pipeline, stateProvider } = throttled({}, () => 0);
    for (let i = 0; i < 20; i++) await pipeline.execute(() => 'ok');
    // Failures that are not refusals count as accepted too.
    await settle(pipeline.execute(() => Promise.reject(new Error('500'))));
    expect(stateProvider.statistics).toEqual({
      requests: 21,
      accepts: 21,
      rejectProbability: 0,
      throttled: 0,
      k: DEFAULT_ADAPTIVE_THROTTLING_K,
      window: DEFAULT_ADAPTIVE_THROTTLING_WINDOW,
    });
  });

  it('handles a refusal by default, unless it is a cancellation', () => {
    const context = new ResilienceContext();
    const failure = (error: unknown) => ({ outcome: { ok: false as const, error }, context });
    expect(handleOverloadRejection(failure(unavailable()))).toBe(true);
    expect(handleOverloadRejection(failure(Object.assign(unavailable(), { name: 'AbortError' })))).toBe(false);
    expect(handleOverloadRejection(failure(new Error('Internal Server Error')))).toBe(false);
  });

  it('draws a random number only while a rejection is possible', async () => {
    let draws = 0;
    const { pipeline } = throttled({}, () => {
      draws++;
      return 0.99;
    });
    // Accepted calls: requests never exceed k × accepts, so no call can be rejected and none draws.
    for (let i = 0; i < 5; i++) await pipeline.execute(() => 'ok');
    expect(draws).toBe(0);
    // Refusals: requests 5 … 11 against 5 accepts; past k × accepts (10) a rejection becomes possible.
    for (let i = 0; i < 7; i++) await settle(pipeline.execute(() => Promise.reject(unavailable())));
    expect(draws).toBe(1);
  });

  it('rejects locally with the SRE probability once the dependency refuses, counting the rejection as a request', async () => {
    let draw = 0.9999;
    const onThrottled: unknown[] = [];
    const { pipeline, stateProvider, listener } = throttled(
      { name: 'throttle', onThrottled: (args) => void onThrottled.push(args) },
      () => draw,
    );
    await refuse(pipeline, 10);
    // requests 10, accepts 0, k 2: p = (10 - 0) / 11.
    expect(stateProvider.statistics.rejectProbability).toBeCloseTo(10 / 11, 12);
    draw = 0.9; // < 10/11: rejected
    let called = false;
    const error = await settle(
      pipeline.execute(() => {
        called = true;
        return 'never';
      }),
    );
    expect(called).toBe(false);
    expect(error).toBeInstanceOf(AdaptiveThrottlingRejectedError);
    expect(error).toBeInstanceOf(RateLimiterRejectedError);
    expect(isAdaptiveThrottlingRejectedError(error)).toBe(true);
    expect(isRateLimiterRejectedError(error)).toBe(true);
    expect(isAdaptiveThrottlingRejectedError(new RateLimiterRejectedError())).toBe(false);
    const rejection = error as AdaptiveThrottlingRejectedError;
    expect(rejection.name).toBe('AdaptiveThrottlingRejectedError');
    expect(rejection.reason).toBe('adaptive-throttling');
    expect(rejection.rejectProbability).toBeCloseTo(10 / 11, 12);
    expect([rejection.requests, rejection.accepts]).toEqual([11, 0]);
    expect(rejection.retryAfter).toBeUndefined();
    expect(rejection.source).toEqual({ pipelineName: undefined, strategyName: 'throttle' });
    expect(onThrottled).toEqual([expect.objectContaining({ requests: 11, accepts: 0 })]);
    const events = listener.events.filter((e) => e.eventName === 'OnAdaptiveThrottlingRejected');
    expect(events).toHaveLength(1);
    expect(events[0].severity).toBe('warning');
    expect(events[0].source.strategyType).toBe('adaptive-throttling');
    expect(events[0].arguments).toEqual({ rejectProbability: 10 / 11, requests: 11, accepts: 0 });
    expect(stateProvider.statistics).toEqual(expect.objectContaining({ requests: 11, accepts: 0, throttled: 1 }));
    // A draw at or above p goes through.
    draw = 11 / 12;
    await expect(pipeline.execute(() => 'through')).resolves.toBe('through');
  });

  it('tolerates refusals up to (k - 1) / k of the requests without rejecting', async () => {
    const { pipeline, stateProvider } = throttled({ k: 2 }, () => 0);
    for (let i = 0; i < 10; i++) {
      await pipeline.execute(() => 'ok');
      await settle(pipeline.execute(() => Promise.reject(unavailable())));
    }
    expect(stateProvider.statistics).toEqual(expect.objectContaining({ requests: 20, accepts: 10 }));
    expect(stateProvider.statistics.rejectProbability).toBe(0);
    await expect(pipeline.execute(() => 'ok')).resolves.toBe('ok');
  });

  it('forgets what left the window (2 minutes by default)', async () => {
    const { pipeline, stateProvider, time } = throttled({}, () => 0.9999);
    await refuse(pipeline, 10);
    time.advance(60_000);
    expect(stateProvider.statistics.requests).toBe(10);
    time.advance(60_000);
    expect(stateProvider.statistics).toEqual(
      expect.objectContaining({ requests: 0, accepts: 0, rejectProbability: 0 }),
    );
    const short = throttled({ window: 1_000 }, () => 0.9999);
    await refuse(short.pipeline, 5);
    short.time.advance(1_000);
    expect(short.stateProvider.statistics.requests).toBe(0);
  });

  it('caps the probability at maxRejectProbability', async () => {
    const { pipeline, stateProvider } = throttled({ maxRejectProbability: 0.5 }, () => 0.5);
    await refuse(pipeline, 20);
    expect(stateProvider.statistics.rejectProbability).toBe(0.5);
    // A draw of 0.5 is not below the cap: the call goes through.
    await expect(pipeline.execute(() => 'ok')).resolves.toBe('ok');
  });

  it('counts refusals as the predicates say: statuses 429/503 (errors or results), gRPC codes, open circuits', async () => {
    const refusals: unknown[] = [
      Object.assign(new Error('Too Many Requests'), { response: { status: 429 } }),
      { status: 503, error: 'Service Unavailable', message: 'The circuit of "x" is open.', retryAfter: null },
      Object.assign(new Error('8 RESOURCE_EXHAUSTED'), { code: 8 }),
      Object.assign(new Error('14 UNAVAILABLE'), { code: 'UNAVAILABLE' }),
      new BrokenCircuitError(),
    ];
    for (const refusal of refusals) expect(isOverloadRejection(refusal)).toBe(true);
    for (const other of [new Error('x'), { status: 500 }, 'text', null, Object.assign(new Error(), { code: 2 })]) {
      expect(isOverloadRejection(other)).toBe(false);
    }
    expect(handleOverloadRejection({ outcome: { ok: true, value: { status: 503 } } })).toBe(true);
    expect(handleOverloadRejection({ outcome: { ok: true, value: { status: 200 } } })).toBe(false);

    const { pipeline, stateProvider } = throttled({}, () => 0.9999);
    for (const refusal of refusals) await settle(pipeline.execute(() => Promise.reject(refusal)));
    await pipeline.execute(() => ({ status: 503 }));
    // A cancellation is not a refusal.
    await settle(pipeline.execute(() => Promise.reject(new DOMException('gone', 'AbortError'))));
    expect(stateProvider.statistics).toEqual(expect.objectContaining({ requests: 7, accepts: 1 }));
  });

  it('uses a predicate of its own, which may answer later', async () => {
    const { pipeline, stateProvider } = throttled(
      { shouldHandle: async ({ outcome }) => !outcome.ok && (outcome.error as Error).message === 'busy' },
      () => 0.9999,
    );
    await settle(pipeline.execute(() => Promise.reject(new Error('busy'))));
    await settle(pipeline.execute(() => Promise.reject(unavailable())));
    await expect(pipeline.execute(() => 'value')).resolves.toBe('value');
    expect(stateProvider.statistics).toEqual(expect.objectContaining({ requests: 3, accepts: 2 }));
  });

  it('validates its options at build, every problem at once', () => {
    expect(
      strategyProblems('adaptive-throttling', (b) =>
        b.addAdaptiveThrottling({
          k: 0.5,
          window: '2m' as never,
          maxRejectProbability: 2,
          shouldHandle: 'overload' as never,
          stateProvider: {} as never,
          extra: 1,
        } as never),
      ).map((p) => p.path),
    ).toEqual(['extra', 'k', 'window', 'maxRejectProbability', 'shouldHandle', 'stateProvider']);
    const provider = new AdaptiveThrottlingStateProvider();
    expect(provider.isInitialized).toBe(false);
    expect(provider.statistics.requests).toBe(0);
    new ResiliencePipelineBuilder().addAdaptiveThrottling({ stateProvider: provider }).build();
    expect(provider.isInitialized).toBe(true);
    expect(() => new ResiliencePipelineBuilder().addAdaptiveThrottling({ stateProvider: provider }).build()).toThrow(
      /already used/,
    );
  });
});

describe('the adaptiveThrottling section', () => {
  it('sits between retry and the circuit breaker, reads strings and names its predicate', async () => {
    const time = new FakeTimeProvider();
    const registry = new ResiliencePipelineRegistry({
      timeProvider: time,
      pipelines: {
        p: {
          circuitBreaker: { kind: 'consecutive', failureThreshold: 100 },
          adaptiveThrottling: { k: '1.5', window: '30s', maxRejectProbability: '0.9', shouldHandle: 'overload' },
          retry: { maxRetryAttempts: 1, delay: 0 },
        },
      },
    });
    const pipeline = registry.getPipeline('p');
    expect(pipeline.describe().map((d) => d.type)).toEqual(['retry', 'adaptive-throttling', 'circuit-breaker']);
    await expect(pipeline.execute(() => 'ok')).resolves.toBe('ok');
    expect(adaptiveThrottlingRegistration.sections?.adaptiveThrottling?.decorator).toBe('AdaptiveThrottling');
    expect(adaptiveThrottlingRegistration.events).toEqual([
      'OnAdaptiveThrottlingRejected',
      'OnStateStoreUnavailable',
      'OnStateStoreRestored',
    ]);
    await registry.dispose();
  });

  it('reports invalid configuration under the section', () => {
    let error: unknown;
    try {
      new ResiliencePipelineRegistry({
        pipelines: { p: { adaptiveThrottling: { k: 'lots', window: 'soon', shouldHandle: 'nope' } } },
      });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ResilienceValidationError);
    expect((error as ResilienceValidationError).issues.map((i) => i.path)).toEqual(
      expect.arrayContaining([
        'pipelines.p.adaptiveThrottling.k',
        'pipelines.p.adaptiveThrottling.window',
        'pipelines.p.adaptiveThrottling.shouldHandle',
      ]),
    );
  });
});
