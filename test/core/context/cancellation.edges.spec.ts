import { describe, expect, it } from '@jest/globals';
import {
  handleAllErrors,
  isCancellation,
  outcomeFromError,
  ResilienceContext,
  ResiliencePipelineBuilder,
  TimeoutRejectedError,
} from '../../../src/core.entry.js';
import { FakeTimeProvider } from '../../../src/testing/index.js';
import { microtaskTurns } from '../../utils/microtask-turns.js';

describe('cancellation at the edges', () => {
  it('undefined thrown on a context nobody cancelled is a failure, not a cancellation', () => {
    const context = new ResilienceContext();
    expect(isCancellation(undefined, context)).toBe(false);
    expect(isCancellation(undefined)).toBe(false);
    expect(handleAllErrors({ outcome: outcomeFromError(undefined), context })).toBe(true);
    const signalled = new ResilienceContext({ signal: new AbortController().signal });
    expect(isCancellation(undefined, signalled)).toBe(false);
  });

  it('under a timeout, a caller abort is seen without reading the signal', async () => {
    const time = new FakeTimeProvider();
    const caller = new AbortController();
    const pipeline = new ResiliencePipelineBuilder({ timeProvider: time }).addTimeout(1_000).build();
    const seen = pipeline.execute(
      async (ctx) => {
        const before = ctx.isCancellationRequested;
        caller.abort(new Error('left'));
        await Promise.resolve();
        return [before, ctx.isCancellationRequested];
      },
      { signal: caller.signal },
    );
    await expect(seen).resolves.toEqual([false, true]);
  });

  it('once the deadline passed, the call is cancelled without its signal being read', async () => {
    const time = new FakeTimeProvider();
    const pipeline = new ResiliencePipelineBuilder({ timeProvider: time }).addTimeout(100).build();
    let context: ResilienceContext | undefined;
    const result = pipeline.execute(async (ctx) => {
      context = ctx;
      await time.delay(500);
      return ctx.isCancellationRequested;
    });
    await time.advanceAsync(100);
    expect(context!.isCancellationRequested).toBe(true);
    await time.advanceAsync(400);
    // A cooperative timeout keeps the value of a callback that ignored the signal.
    await expect(result).resolves.toBe(true);
  });

  it('a callback that rejects with its signal reason at the deadline ends in TimeoutRejectedError', async () => {
    const time = new FakeTimeProvider();
    const pipeline = new ResiliencePipelineBuilder({ timeProvider: time }).addTimeout(100).build();
    const result = pipeline
      .execute(
        ({ signal }) => new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason))),
      )
      .catch((e: unknown) => e);
    await time.advanceAsync(100);
    await expect(result).resolves.toBeInstanceOf(TimeoutRejectedError);
  });

  it("a retry under a timeout stops at the caller's abort, giving the attempt's failure", async () => {
    const time = new FakeTimeProvider();
    const caller = new AbortController();
    const reason = new Error('caller left');
    const pipeline = new ResiliencePipelineBuilder({ timeProvider: time })
      .addTimeout(1_000)
      .addRetry({ maxRetryAttempts: 3, delay: 0 })
      .build();
    let attempts = 0;
    const result = pipeline.execute(
      () => {
        attempts++;
        caller.abort(reason);
        throw new Error('failed');
      },
      { signal: caller.signal },
    );
    await expect(result).rejects.toThrow('failed');
    expect(attempts).toBe(1);
  });

  it("the caller's reason stays the cancellation when the deadline passes after the caller aborted", async () => {
    const time = new FakeTimeProvider();
    const caller = new AbortController();
    const reason = new Error('caller left');
    const pipeline = new ResiliencePipelineBuilder({ timeProvider: time })
      .addTimeout(100)
      .addFallback({ fallbackValue: 'fallback' })
      .build();
    const result = pipeline
      .execute(
        async ({ signal }) => {
          void signal; // linked to the caller's signal from here on
          await time.delay(10);
          caller.abort(reason);
          await time.delay(300); // ignores the abort, past the deadline
          throw reason;
        },
        { signal: caller.signal },
      )
      .catch((e: unknown) => e);
    await time.advanceAsync(400);
    // Still the caller's cancellation: the fallback does not replace it.
    await expect(result).resolves.toBe(reason);
  });

  it('wrapCallback outside an execution leaves the context as fast as a fresh one', async () => {
    const pipeline = new ResiliencePipelineBuilder().addTimeout(1_000).build();
    const wrapped = new ResilienceContext();
    wrapped.wrapCallback((run) => run());
    expect(await microtaskTurns(pipeline.execute(() => 1, wrapped))).toBe(
      await microtaskTurns(pipeline.execute(() => 1, new ResilienceContext())),
    );
  });
});
