import { describe, expect, it } from '@jest/globals';
import {
  DeadlineExceededError,
  isDeadlineExceededError,
  isTimeoutRejectedError,
  ResilienceContext,
  ResiliencePipelineBuilder,
  TimeoutRejectedError,
} from '../../../src/core/index.js';
import { FakeTimeProvider } from '../../../src/testing/index.js';
import { scripted, settle } from '../../utils/flaky.js';
import { RecordingListener } from '../../utils/recording.listener.js';

const down = new Error('down');

/** A callback that waits `ms` on the fake clock, following the context's signal. */
function working(time: FakeTimeProvider, ms: number, value = 'done') {
  let calls = 0;
  const fn = async (context: ResilienceContext): Promise<string> => {
    calls++;
    await time.delay(ms, context.signal);
    return value;
  };
  Object.defineProperty(fn, 'calls', { get: () => calls });
  return fn as typeof fn & { readonly calls: number };
}

describe('the caller deadline of a context', () => {
  it('is what `deadline` reads, and Infinity without one', () => {
    expect(new ResilienceContext().deadline).toBe(Infinity);
    expect(new ResilienceContext({ deadline: 1_500 }).deadline).toBe(1_500);
    expect(new ResilienceContext({ deadline: Number.NaN }).deadline).toBe(Infinity);
    expect(new ResilienceContext({ deadline: 1_500 }).fork().deadline).toBe(1_500);
  });

  it('runs a call given no deadline, NaN or Infinity as a call without one', async () => {
    const pipeline = new ResiliencePipelineBuilder({ timeProvider: new FakeTimeProvider() }).addRetry().build();
    for (const deadline of [undefined, Number.NaN, Infinity]) {
      await expect(pipeline.execute(({ deadline: seen }) => seen, { deadline })).resolves.toBe(Infinity);
    }
  });

  it('rejects a call whose deadline has passed before it starts, without running it', async () => {
    const time = new FakeTimeProvider(10_000);
    const fn = scripted<string>({ returns: 'ran' });
    const pipeline = new ResiliencePipelineBuilder({ timeProvider: time }).addRetry().build();
    const error = await settle(pipeline.execute(fn, { deadline: 10_000 }));
    expect(error).toBeInstanceOf(DeadlineExceededError);
    expect(error).toBeInstanceOf(TimeoutRejectedError);
    expect(isDeadlineExceededError(error)).toBe(true);
    expect(isTimeoutRejectedError(error)).toBe(true);
    expect((error as DeadlineExceededError).name).toBe('DeadlineExceededError');
    expect((error as DeadlineExceededError).timeout).toBe(0);
    expect(fn.calls).toBe(0);
    expect(isDeadlineExceededError(new TimeoutRejectedError(5))).toBe(false);
  });

  it('aborts the signal when the deadline passes and fails with DeadlineExceededError', async () => {
    const time = new FakeTimeProvider();
    const fn = working(time, 1_000);
    const pipeline = new ResiliencePipelineBuilder({ timeProvider: time }).addRetry({ delay: 10 }).build();
    const result = settle(pipeline.execute(fn, { deadline: 300 }));
    await time.advanceAsync(300);
    const error = await result;
    expect(isDeadlineExceededError(error)).toBe(true);
    expect((error as DeadlineExceededError).timeout).toBe(300);
    // Cancellation is never retried.
    expect(fn.calls).toBe(1);
    expect(time.pendingTimerCount).toBe(0);
  });

  it('keeps a value that arrives in time, releases its timer and can be reused', async () => {
    const time = new FakeTimeProvider();
    const pipeline = new ResiliencePipelineBuilder({ timeProvider: time }).build();
    const context = new ResilienceContext({ deadline: 500 });
    const first = pipeline.execute(working(time, 100, 'first'), context);
    await time.advanceAsync(100);
    await expect(first).resolves.toBe('first');
    expect(time.pendingTimerCount).toBe(0);
    expect(context.deadline).toBe(500);
    const second = settle(pipeline.execute(working(time, 1_000), context));
    await time.advanceAsync(400);
    expect(isDeadlineExceededError(await second)).toBe(true);
    expect(time.pendingTimerCount).toBe(0);
  });

  it('is seen inside the pipeline, tightened by an inner timeout and never loosened by a longer one', async () => {
    const time = new FakeTimeProvider(1_000);
    const seen: number[] = [];
    const record = (context: ResilienceContext) => seen.push(context.deadline);
    const pipeline = (timeout: number) =>
      new ResiliencePipelineBuilder({ timeProvider: time }).addTimeout(timeout).build();
    await pipeline(100).execute(record, { deadline: 1_500 });
    await pipeline(10_000).execute(record, { deadline: 1_500 });
    expect(seen).toEqual([1_100, 1_500]);
  });

  it('is armed once for a nested call on the same context', async () => {
    const time = new FakeTimeProvider();
    const outer = new ResiliencePipelineBuilder({ timeProvider: time }).build();
    const inner = new ResiliencePipelineBuilder({ timeProvider: time }).build();
    let timers = -1;
    await outer.execute(
      (context) =>
        inner.execute(() => {
          timers = time.pendingTimerCount;
        }, context),
      { deadline: 1_000 },
    );
    expect(timers).toBe(1);
    expect(time.pendingTimerCount).toBe(0);
  });

  it('reads the error a callback ends with once the deadline aborted it: an abort or timeout error is the deadline, another error stays', async () => {
    const time = new FakeTimeProvider();
    const pipeline = new ResiliencePipelineBuilder({ timeProvider: time }).build();
    /** A callback that, when its signal aborts, fails with `error` instead of the signal's reason. */
    const failingWith = (error: unknown) => (context: ResilienceContext) =>
      new Promise((_, reject) => context.signal.addEventListener('abort', () => reject(error)));
    const abort = new DOMException('request aborted', 'AbortError');
    const timeout = new DOMException('request timed out', 'TimeoutError');
    const other = new Error('connection reset while aborting');
    const results = [abort, timeout, other].map((error) =>
      settle(pipeline.execute(failingWith(error), { deadline: 100 })),
    );
    await time.advanceAsync(100);
    const [fromAbort, fromTimeout, fromOther] = await Promise.all(results);
    expect(isDeadlineExceededError(fromAbort)).toBe(true);
    expect((fromAbort as DeadlineExceededError).cause).toBe(abort);
    expect(isDeadlineExceededError(fromTimeout)).toBe(true);
    expect(fromOther).toBe(other);
  });

  it('leaves other failures and a caller cancellation as they are', async () => {
    const time = new FakeTimeProvider();
    const pipeline = new ResiliencePipelineBuilder({ timeProvider: time }).build();
    await expect(pipeline.execute(scripted({ throws: down }), { deadline: 100 })).rejects.toBe(down);
    const controller = new AbortController();
    const cancelled = settle(pipeline.execute(working(time, 1_000), { deadline: 500, signal: controller.signal }));
    controller.abort(new DOMException('gone', 'AbortError'));
    const error = await cancelled;
    expect((error as Error).name).toBe('AbortError');
    expect(time.pendingTimerCount).toBe(0);
  });
});

describe('a retry under a deadline', () => {
  it('never starts an attempt at or after the deadline: it gives the last failure at once', async () => {
    const time = new FakeTimeProvider();
    const listener = new RecordingListener();
    const fn = scripted<string>({ throws: down });
    const pipeline = new ResiliencePipelineBuilder({ timeProvider: time, telemetryListeners: [listener] })
      .addRetry({ delay: 100, maxRetryAttempts: 10 })
      .build();
    const result = settle(pipeline.execute(fn, { deadline: 300 }));
    await time.advanceAsync(300);
    // Attempts at 0, 100 and 200; the one due at 300 would start at the deadline.
    expect(await result).toBe(down);
    expect(fn.calls).toBe(3);
    const giveUp = listener.events.find((e) => e.eventName === 'OnRetryGiveUp');
    expect(giveUp?.arguments).toEqual(expect.objectContaining({ reason: 'deadline', attemptNumber: 2 }));
    expect(time.pendingTimerCount).toBe(0);
  });
});
