import { describe, expect, it, jest } from '@jest/globals';
import {
  CircuitBreakerStateProvider,
  handleAllErrors,
  handleError,
  handleTransientHttp,
  handleTransientNetworkErrors,
  isCancellation,
  isCancellationOutcome,
  ResilienceContext,
  ResiliencePipelineBuilder,
} from '../../../src/core.entry.js';
import { FakeTimeProvider } from '../../../src/testing/index.js';

/** A caller's own abort reason: not an AbortError, so only the signal tells it is a cancellation. */
class CallerGaveUp extends Error {
  readonly status = 503;
  readonly code = 'ECONNRESET';
}

/** A context whose signal was aborted with `reason`. */
function abortedContext(reason: unknown): ResilienceContext {
  const controller = new AbortController();
  controller.abort(reason);
  return new ResilienceContext({ signal: controller.signal });
}

/** Runs `pipeline` with a callback that aborts the caller's signal with `reason` and rejects with it. */
function executeAbortingWith<T>(
  pipeline: { execute: (fn: (c: ResilienceContext) => Promise<T>, o: { signal: AbortSignal }) => Promise<T> },
  reason: unknown,
  calls: { count: number } = { count: 0 },
): Promise<T> {
  const controller = new AbortController();
  return pipeline.execute(
    ({ signal }) => {
      calls.count++;
      controller.abort(reason);
      return Promise.reject(signal.reason);
    },
    { signal: controller.signal },
  );
}

describe('one cancellation rule', () => {
  it('is a cancellation when the signal aborted and the error is its reason, or a standard abort error', () => {
    const reason = new CallerGaveUp('client left');
    expect(isCancellation(reason, abortedContext(reason))).toBe(true);
    expect(isCancellation(reason, new ResilienceContext())).toBe(false);
    expect(isCancellation(new CallerGaveUp('other'), abortedContext(reason))).toBe(false);
    expect(isCancellation(new DOMException('stop', 'AbortError'))).toBe(true);
    expect(isCancellation(Object.assign(new Error('canceled'), { code: 'ERR_CANCELED' }))).toBe(true);
    // The deprecated outcome form: a failure whose error is a cancellation.
    expect(isCancellationOutcome({ ok: true, value: reason }, abortedContext(reason))).toBe(false);
    expect(isCancellationOutcome({ ok: false, error: reason }, abortedContext(reason))).toBe(true);
    expect(isCancellationOutcome({ ok: false, error: reason }, new ResilienceContext())).toBe(false);
  });

  it('fallback does not replace a cancellation with a custom reason (default predicate)', async () => {
    const reason = new CallerGaveUp('client left');
    const pipeline = new ResiliencePipelineBuilder<string>().addFallback({ fallbackValue: 'cached' }).build();
    await expect(executeAbortingWith(pipeline, reason)).rejects.toBe(reason);
    // The same error without a cancelled signal is an ordinary failure.
    await expect(pipeline.execute(() => Promise.reject(reason))).resolves.toBe('cached');
  });

  it('fallback does not replace a cancellation even when its own predicate would', async () => {
    const reason = new CallerGaveUp('client left');
    const fallbackAction = jest.fn(() => 'cached');
    const pipeline = new ResiliencePipelineBuilder<string>()
      .addFallback({ fallbackAction, shouldHandle: () => true })
      .build();
    await expect(executeAbortingWith(pipeline, reason)).rejects.toBe(reason);
    await expect(pipeline.execute(() => Promise.reject(new DOMException('x', 'AbortError')))).rejects.toMatchObject({
      name: 'AbortError',
    });
    expect(fallbackAction).not.toHaveBeenCalled();
  });

  it('retry never retries a standard abort error, whatever its predicate says', async () => {
    const time = new FakeTimeProvider();
    const pipeline = new ResiliencePipelineBuilder({ timeProvider: time })
      .addRetry({ maxRetryAttempts: 3, delay: 0, shouldHandle: () => true })
      .build();
    let calls = 0;
    await expect(
      pipeline.execute(() => {
        calls++;
        throw new DOMException('stopped by the callee', 'AbortError');
      }),
    ).rejects.toMatchObject({ name: 'AbortError' });
    expect(calls).toBe(1);
  });

  it('hedging does not start another attempt for a cancellation, whatever its predicate says', async () => {
    const time = new FakeTimeProvider();
    const pipeline = new ResiliencePipelineBuilder<string>({ timeProvider: time })
      .addHedging({ maxHedgedAttempts: 2, delay: -1, shouldHandle: () => true })
      .build();
    let calls = 0;
    await expect(
      pipeline.execute(async () => {
        calls++;
        throw new DOMException('stopped', 'AbortError');
      }),
    ).rejects.toMatchObject({ name: 'AbortError' });
    expect(calls).toBe(1);
  });

  it('the circuit breaker does not count a cancellation with a custom reason', async () => {
    const provider = new CircuitBreakerStateProvider();
    const pipeline = new ResiliencePipelineBuilder<string>()
      .addCircuitBreaker({
        kind: 'consecutive',
        failureThreshold: 1,
        stateProvider: provider,
        shouldHandle: () => true,
      })
      .build();
    await expect(executeAbortingWith(pipeline, new CallerGaveUp('left'))).rejects.toBeInstanceOf(CallerGaveUp);
    expect(provider.circuitState).toBe('closed');
  });

  it('every built-in predicate excludes it', () => {
    const reason = new CallerGaveUp('client left');
    const outcome = { ok: false as const, error: reason };
    const cancelled = { outcome, context: abortedContext(reason) };
    const failed = { outcome, context: new ResilienceContext() };
    const predicates = {
      handleAllErrors,
      handleErrorByClass: handleError(CallerGaveUp),
      handleErrorByFilter: handleError(() => true),
      handleTransientNetworkErrors,
      handleTransientHttp,
    };
    for (const [name, predicate] of Object.entries(predicates)) {
      expect(`${name}: ${String(predicate(cancelled) as boolean)}`).toBe(`${name}: false`);
      expect(`${name}: ${String(predicate(failed) as boolean)}`).toBe(`${name}: true`);
    }
  });
});
