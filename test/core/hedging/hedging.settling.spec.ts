import { describe, expect, it, jest } from '@jest/globals';
import { ResiliencePipelineBuilder, type ResilienceContext } from '../../../src/core.entry.js';
import { FakeTimeProvider } from '../../../src/testing/index.js';
import { deferred } from '../../utils/flaky.js';

type HedgingOptions = Parameters<ResiliencePipelineBuilder<string>['addHedging']>[0];

function hedged(options: HedgingOptions) {
  const time = new FakeTimeProvider();
  const pipeline = new ResiliencePipelineBuilder<string>({ timeProvider: time }).addHedging(options).build();
  return { time, pipeline };
}

describe('which attempts a hedged call aborts when it returns', () => {
  it('never the accepted one (it may still be reading its response) nor one that already failed', async () => {
    const { time, pipeline } = hedged({ delay: 0, maxHedgedAttempts: 2 });
    const signals: AbortSignal[] = [];
    const result = pipeline.execute(async (ctx) => {
      signals[ctx.attemptNumber] = ctx.signal;
      // attempt 0 fails at once, attempt 1 answers after 10 ms, attempt 2 would take 100 ms
      if (ctx.attemptNumber === 0) throw new Error('attempt 0 failed');
      await time.delay(ctx.attemptNumber === 1 ? 10 : 100, ctx.signal);
      return `attempt ${ctx.attemptNumber}`;
    });
    await time.advanceAsync(10);
    await expect(result).resolves.toBe('attempt 1');
    expect(signals.map((s) => s.aborted)).toEqual([false, false, true]);
    expect(signals[2].reason).toMatchObject({ name: 'AbortError', message: 'Another hedged attempt was accepted.' });
  });
});

describe('hedging while the caller cancels', () => {
  it('takes the first failure that follows the cancellation as the answer, without judging it', async () => {
    const shouldHandle = jest.fn(() => true);
    const { time, pipeline } = hedged({ delay: 10, maxHedgedAttempts: 1, shouldHandle });
    const controller = new AbortController();
    const result = pipeline.execute(
      (ctx) => {
        if (ctx.attemptNumber === 0) {
          // The primary ignores the cancellation for a long time, then fails.
          return time.delay(1_000).then(() => Promise.reject(new Error('primary failed late')));
        }
        // The hedge fails with an error of its own once the caller has left.
        return new Promise<string>((_, reject) =>
          ctx.signal.addEventListener('abort', () => reject(new Error('hedge cleanup failed'))),
        );
      },
      { signal: controller.signal },
    );
    result.catch(() => undefined);
    await time.advanceAsync(10); // the hedge starts
    controller.abort(new Error('caller left'));
    await time.advanceAsync(0);
    // The hedge's failure is the answer (once the primary, which ignores its signal, has settled too).
    await time.advanceAsync(1_000);
    await expect(result).rejects.toThrow('hedge cleanup failed');
    expect(shouldHandle).not.toHaveBeenCalled();
  });

  it('raises nothing when the caller cancels while an onHedging callback is still running', async () => {
    const inCallback = deferred<void>();
    const release = deferred<void>();
    const { time, pipeline } = hedged({
      delay: 10,
      maxHedgedAttempts: 2,
      onHedging: async () => {
        inCallback.resolve();
        await release.promise;
      },
    });
    const controller = new AbortController();
    const started: number[] = [];
    const result = pipeline.execute(
      (ctx: ResilienceContext) => {
        started.push(ctx.attemptNumber);
        return time.delay(1_000, ctx.signal).then(() => `attempt ${ctx.attemptNumber}`);
      },
      { signal: controller.signal },
    );
    result.catch(() => undefined);
    await time.advanceAsync(10);
    await inCallback.promise;
    // No wait is in progress now: the cancellation must not find one to end.
    expect(() => controller.abort(new Error('caller left'))).not.toThrow();
    release.resolve();
    await expect(result).rejects.toThrow('caller left');
    expect(started).toEqual([0, 1]);
    expect(time.pendingTimerCount).toBe(0);
  });
});

describe('when hedging asks for the next delay', () => {
  it('judges an attempt that failed during an onHedging callback before asking the delay generator again', async () => {
    const asked: number[] = [];
    const release = deferred<void>();
    const { time, pipeline } = hedged({
      maxHedgedAttempts: 2,
      delayGenerator: ({ attemptNumber }) => {
        asked.push(attemptNumber);
        return 100;
      },
      onHedging: ({ attemptNumber }) => (attemptNumber === 1 ? release.promise : undefined),
    });
    const started: number[] = [];
    const result = pipeline.execute(async (ctx) => {
      started.push(ctx.attemptNumber);
      if (ctx.attemptNumber === 0) {
        await time.delay(105);
        throw new Error('primary failed');
      }
      await time.delay(1_000, ctx.signal);
      return `attempt ${ctx.attemptNumber}`;
    });
    await time.advanceAsync(100); // attempt 1 starts; its onHedging callback holds the loop
    await time.advanceAsync(5); // the primary fails meanwhile
    release.resolve();
    await time.advanceAsync(0);
    // The failure starts attempt 2 at once: no delay is asked for it.
    expect(started).toEqual([0, 1, 2]);
    expect(asked).toEqual([1]);
    await time.advanceAsync(1_000);
    await expect(result).resolves.toBe('attempt 1');
  });

  it('starts one hedge per failure in delayed mode, not a timed one as well', async () => {
    const { time, pipeline } = hedged({ delay: 100, maxHedgedAttempts: 2 });
    const started: number[] = [];
    const result = pipeline.execute(async (ctx) => {
      started.push(ctx.attemptNumber);
      if (ctx.attemptNumber === 0) {
        await time.delay(10); // fails while the hedge delay is running
        throw new Error('primary failed');
      }
      await time.delay(50, ctx.signal);
      return `attempt ${ctx.attemptNumber}`;
    });
    await time.advanceAsync(10);
    expect(started).toEqual([0, 1]);
    await time.advanceAsync(50);
    await expect(result).resolves.toBe('attempt 1');
    expect(started).toEqual([0, 1]);
  });
});
