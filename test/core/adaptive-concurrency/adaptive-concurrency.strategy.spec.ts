import { describe, expect, it, jest } from '@jest/globals';
import { parse } from 'yaml';
import {
  adaptiveConcurrencyRegistration,
  isRateLimiterRejectedError,
  ResilienceContext,
  ResiliencePipelineBuilder,
  ResiliencePipelineRegistry,
  ResilienceValidationError,
  setCriticality,
  TimeoutRejectedError,
  type AdaptiveConcurrencyOptions,
  type Criticality,
  type RateLimiterRejectedError,
  type ResiliencePipeline,
} from '../../../src/core.entry.js';
import { FakeTimeProvider, flushPromises } from '../../../src/testing/index.js';
import { deferred } from '../../utils/flaky.js';
import { RecordingListener } from '../../utils/recording.listener.js';

function build(options: AdaptiveConcurrencyOptions) {
  const time = new FakeTimeProvider();
  const listener = new RecordingListener();
  const pipeline = new ResiliencePipelineBuilder({ name: 'api', timeProvider: time, telemetryListeners: [listener] })
    .addAdaptiveConcurrencyLimiter(options)
    .build();
  /** `n` calls at once, each taking `rtt` ms on the fake clock; the calls of `drops` fail with a timeout. */
  const wave = async (n: number, rtt: number, drops = 0) => {
    const calls = Array.from({ length: n }, (_, i) =>
      pipeline
        .execute(async ({ signal }) => {
          await time.delay(rtt, signal);
          if (i < drops) throw new TimeoutRejectedError(rtt);
          return i;
        })
        .catch((e: unknown) => e),
    );
    await time.advanceAsync(rtt);
    return Promise.all(calls);
  };
  const limits = () =>
    listener.events
      .filter((e) => e.eventName === 'OnAdaptiveLimitChanged')
      .map((e) => (e.arguments as { limit: number }).limit);
  return { time, listener, pipeline, wave, limits };
}

describe('Gradient2', () => {
  it('grows by `growth` while latency stays at its baseline, shrinks in proportion when it rises', async () => {
    const { wave, limits } = build({
      initialLimit: 10,
      maxLimit: 20,
      windowSize: 10,
      smoothing: 1,
      growth: 2,
      tolerance: 1.5,
    });
    await wave(10, 10); // baseline 10 ms, gradient 1: 10 + 2
    await wave(10, 10); // 12 + 2
    await wave(10, 40); // baseline avg(10, 10, 40) = 20; gradient 1.5 × 20 / 40 = 0.75: 14 × 0.75 + 2 = 12.5
    expect(limits()).toEqual([12, 14, 12]);
  });

  it('blends each estimate in with `smoothing`, and holds a limit that is not used', async () => {
    const { wave, limits, pipeline } = build({ initialLimit: 10, windowSize: 4, smoothing: 0.5, growth: 4 });
    await wave(4, 10); // 4 in flight < 10 / 2: app-limited, no change
    expect(limits()).toEqual([]);
    const first = build({ initialLimit: 10, windowSize: 5, smoothing: 0.5, growth: 4 });
    await first.wave(5, 10); // 10 × 0.5 + (10 + 4) × 0.5 = 12
    expect(first.limits()).toEqual([12]);
    await pipeline.dispose();
    await first.pipeline.dispose();
  });

  it('stays within minLimit and maxLimit', async () => {
    const { wave, limits } = build({
      initialLimit: 4,
      minLimit: 3,
      maxLimit: 5,
      windowSize: 4,
      smoothing: 1,
      growth: 4,
    });
    await wave(4, 10); // 4 + 4 = 8, bounded to 5
    await wave(4, 10);
    await wave(4, 1_000); // gradient floored at 0.5: 5 × 0.5 + 4 = 6.5 → 5, no change
    await wave(4, 1_000_000);
    expect(limits()).toEqual([5]);
  });
});

describe('AIMD', () => {
  it('adds one per used window, multiplies by backoffRatio after a slow window or a drop', async () => {
    const { wave, limits, listener } = build({
      algorithm: 'aimd',
      initialLimit: 10,
      windowSize: 5,
      backoffRatio: 0.5,
      slowCallDuration: 100,
    });
    await wave(5, 10); // 5 × 2 >= 10: + 1
    await wave(5, 10); // 5 × 2 < 11: held
    await wave(5, 200); // slower than 100 ms: min(11 - 1, floor(11 × 0.5))
    await wave(5, 10, 1); // a timeout: min(5 - 1, floor(5 × 0.5))
    expect(limits()).toEqual([11, 5, 2]);
    const changed = listener.events.find((e) => e.eventName === 'OnAdaptiveLimitChanged')!;
    expect(changed.severity).toBe('information');
    expect(changed.source).toMatchObject({ pipelineName: 'api', strategyType: 'adaptive-concurrency' });
    expect(changed.arguments).toEqual({ previousLimit: 10, limit: 11, rtt: 10, longRtt: undefined });
  });

  it('measures a queued call from the permit handed to it, not from when it queued', async () => {
    const { pipeline, time, limits } = build({
      algorithm: 'aimd',
      initialLimit: 1,
      queueLimit: 1,
      windowSize: 1,
      slowCallDuration: 15,
    });
    const work = ({ signal }: { signal: AbortSignal }) => time.delay(10, signal);
    const first = pipeline.execute(work);
    const queued = pipeline.execute(work); // waits 10 ms, then runs 10 ms: its round trip is 10, not 20
    await time.advanceAsync(10);
    await time.advanceAsync(10);
    await Promise.all([first, queued]);
    expect(limits()).toEqual([2, 3]); // two fast windows; 20 ms would have been a slow one
  });

  it('does not measure a cancelled call', async () => {
    const { pipeline, time, limits } = build({
      algorithm: 'aimd',
      initialLimit: 2,
      windowSize: 1,
      slowCallDuration: 5,
    });
    const controller = new AbortController();
    const call = pipeline.execute(
      ({ signal }) => time.delay(1_000, signal),
      new ResilienceContext({ signal: controller.signal }),
    );
    controller.abort();
    await expect(call).rejects.toMatchObject({ name: 'AbortError' });
    expect(limits()).toEqual([]);
  });
});

describe('rejections', () => {
  async function attempt(
    pipeline: ResiliencePipeline<unknown>,
    criticality: Criticality,
    work: () => Promise<unknown>,
  ) {
    return pipeline.execute(work, setCriticality(new ResilienceContext(), criticality)).catch((e: unknown) => e);
  }

  it('turns away a call over the limit with RateLimiterRejectedError (reason limit), telemetry and onRejected', async () => {
    const onRejected = jest.fn();
    const { pipeline, listener } = build({ initialLimit: 1, name: 'adaptive', onRejected });
    const gate = deferred<string>();
    const running = pipeline.execute(() => gate.promise);
    const error = (await pipeline.execute(() => 'no').catch((e: unknown) => e)) as RateLimiterRejectedError;
    expect(isRateLimiterRejectedError(error)).toBe(true);
    expect(error.reason).toBe('limit');
    expect(error.message).toBe('The operation was rejected by the adaptive concurrency limiter (limit 1).');
    expect(error.source).toEqual({ pipelineName: 'api', strategyName: 'adaptive' });
    expect(onRejected).toHaveBeenCalledWith(expect.objectContaining({ reason: 'limit', limit: 1 }));
    expect(listener.events.filter((e) => e.eventName === 'OnRateLimiterRejected').map((e) => e.arguments)).toEqual([
      { retryAfter: undefined, reason: 'limit' },
    ]);
    gate.resolve('ok');
    await expect(running).resolves.toBe('ok');
  });

  it('sheds a sheddable call once sheddableRatio of the limit is in flight; a critical call takes a queued one\u2019s place', async () => {
    const { pipeline } = build({ initialLimit: 5, sheddableRatio: 0.4, queueLimit: 1 });
    const gate = deferred<string>();
    const hold = () => gate.promise;
    const first = attempt(pipeline, 'sheddable', hold);
    const second = attempt(pipeline, 'sheddable', hold); // 1 in flight < 2
    const third = (await attempt(pipeline, 'sheddable', hold)) as RateLimiterRejectedError; // 2 in flight: shed
    expect(third.reason).toBe('shed');
    const rest = [
      attempt(pipeline, 'default', hold),
      attempt(pipeline, 'default', hold),
      attempt(pipeline, 'critical', hold),
    ];
    const queuedDefault = attempt(pipeline, 'default', () => Promise.resolve('late'));
    const critical = attempt(pipeline, 'critical', () => Promise.resolve('critical'));
    await flushPromises();
    expect(((await queuedDefault) as RateLimiterRejectedError).reason).toBe('shed');
    const full = (await attempt(pipeline, 'critical', hold)) as RateLimiterRejectedError;
    expect(full.reason).toBe('limit'); // the queue holds a critical call only
    gate.resolve('ok');
    await expect(Promise.all([first, second, ...rest, critical])).resolves.toEqual([
      'ok',
      'ok',
      'ok',
      'ok',
      'ok',
      'critical',
    ]);
  });
  it('gives the permit back when isDropped throws, on the direct and the queued path; its error is the outcome', async () => {
    const predicateError = new Error('predicate failed');
    const time = new FakeTimeProvider();
    const strategy = new ResiliencePipelineBuilder({ timeProvider: time }).addAdaptiveConcurrencyLimiter({
      initialLimit: 1,
      queueLimit: 1,
      isDropped: () => {
        throw predicateError;
      },
    });
    const pipeline = strategy.build();
    const gate = deferred<string>();
    const direct = pipeline.execute(() => gate.promise.then(() => Promise.reject(new Error('boom'))));
    const queued = pipeline.execute(() => Promise.reject(new Error('boom')));
    gate.resolve('go');
    await expect(direct).rejects.toBe(predicateError);
    await expect(queued).rejects.toBe(predicateError);
    await expect(pipeline.execute(() => 'free again')).resolves.toBe('free again');
  });

  it('asks isDropped about a failure, never about a cancellation (an abort error, or any error once the caller cancelled)', async () => {
    const asked: unknown[] = [];
    const pipeline = new ResiliencePipelineBuilder({ timeProvider: new FakeTimeProvider() })
      .addAdaptiveConcurrencyLimiter({ isDropped: (error) => asked.push(error) > 0 })
      .build();
    const failure = new Error('boom');
    await expect(pipeline.execute(() => Promise.reject(failure))).rejects.toBe(failure);
    const abort = new DOMException('stopped', 'AbortError');
    await expect(pipeline.execute(() => Promise.reject(abort))).rejects.toBe(abort);
    const caller = new AbortController();
    const late = new Error('failed after the caller left');
    const afterCancel = pipeline.execute(
      () => {
        caller.abort();
        return Promise.reject(late);
      },
      { signal: caller.signal },
    );
    await expect(afterCancel).rejects.toBe(late);
    expect(asked).toEqual([failure]);
  });
});

describe('the adaptiveConcurrency section', () => {
  it('reads YAML (durations and numbers as strings), is inspectable and counts rejections', async () => {
    const config = parse(`
pipelines:
  api:
    adaptiveConcurrency:
      algorithm: aimd
      initialLimit: "1"
      slowCallDuration: 2s
      sheddableRatio: "0.5"
  small:
    adaptiveConcurrency: "3"
`) as { pipelines: Record<string, never> };
    const registry = new ResiliencePipelineRegistry({ pipelines: config.pipelines });
    const api = registry.getPipeline('api');
    expect(api.describe()).toEqual([{ type: 'adaptive-concurrency', name: undefined }]);
    const gate = deferred<string>();
    const running = api.execute(() => gate.promise);
    await expect(api.execute(() => 'no')).rejects.toMatchObject({ reason: 'limit' });
    await registry.getPipeline('small').execute(() => 'ok');
    expect(registry.limiterStatistics()).toEqual([
      {
        pipelineName: 'api',
        instanceKey: undefined,
        section: 'adaptiveConcurrency',
        kind: 'adaptive-aimd',
        permitLimit: 1,
        permitsInUse: 1,
        queueLength: 0,
        queueLimit: 0,
        rejections: 1,
        partitions: undefined,
        distributed: false,
      },
      expect.objectContaining({ pipelineName: 'small', kind: 'adaptive-gradient2', permitLimit: 3, rejections: 0 }),
    ]);
    gate.resolve('ok');
    await running;
    await registry.dispose();
  });

  it('lists every invalid option at start-up, with its path', () => {
    let error: unknown;
    try {
      new ResiliencePipelineRegistry({
        pipelines: {
          p: {
            adaptiveConcurrency: {
              algorithm: 'vegas' as never,
              minLimit: 10,
              maxLimit: 5,
              smoothing: 0,
              backoffRatio: 1,
              slowCallDuration: 'soon',
              windowsize: 3,
            } as never,
          },
        },
      });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ResilienceValidationError);
    expect((error as ResilienceValidationError).issues.map((i) => i.path)).toEqual([
      'pipelines.p.adaptiveConcurrency.windowsize',
      'pipelines.p.adaptiveConcurrency.algorithm',
      'pipelines.p.adaptiveConcurrency.smoothing',
      'pipelines.p.adaptiveConcurrency.backoffRatio',
      'pipelines.p.adaptiveConcurrency.slowCallDuration',
      'pipelines.p.adaptiveConcurrency.maxLimit',
    ]);
  });

  it('is the @AdaptiveConcurrencyLimit decorator, placed after the concurrency limiter', () => {
    expect(adaptiveConcurrencyRegistration.sections?.adaptiveConcurrency?.decorator).toBe('AdaptiveConcurrencyLimit');
    expect(adaptiveConcurrencyRegistration.events).toEqual(['OnAdaptiveLimitChanged', 'OnRateLimiterRejected']);
  });
});
