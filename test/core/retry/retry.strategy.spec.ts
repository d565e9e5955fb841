import { describe, expect, it } from '@jest/globals';
import {
  BrokenCircuitError,
  handleResult,
  handleTransientNetworkErrors,
  IsolatedCircuitError,
  ResilienceContext,
  ResiliencePipelineBuilder,
  type OnRetryArguments,
  type RetryStrategyOptions,
} from '../../../src/core.entry.js';
import { FakeTimeProvider } from '../../../src/testing/index.js';
import { failTimes, isPending, networkError, scripted } from '../../utils/flaky.js';
import { RecordingListener } from '../../utils/recording.listener.js';

function setup() {
  const time = new FakeTimeProvider();
  const builder = new ResiliencePipelineBuilder({ timeProvider: time, random: () => 0.5 });
  return { time, builder };
}

/** Runs `fn` under a retry built from `options`, drives the clock `advanceBy` ms and returns the result with the delays onRetry saw. */
async function runRecordingDelays<T>(
  options: Omit<RetryStrategyOptions, 'onRetry'>,
  fn: () => Promise<T>,
  advanceBy: number,
): Promise<{ result: T; delays: number[] }> {
  const { time, builder } = setup();
  const delays: number[] = [];
  const pipeline = builder.addRetry({ ...options, onRetry: (a) => void delays.push(a.retryDelay) }).build();
  const running = pipeline.execute(fn);
  await time.advanceAsync(advanceBy);
  return { result: await running, delays };
}

describe('retry strategy', () => {
  it('reports a first attempt that succeeds, also when it runs inline with the strategies next to it', async () => {
    for (const shape of [
      (b: ResiliencePipelineBuilder) => b.addRetry(),
      (b: ResiliencePipelineBuilder) => b.addRetry().addTimeout(1_000),
    ]) {
      const listener = new RecordingListener();
      const builder = new ResiliencePipelineBuilder({
        timeProvider: new FakeTimeProvider(),
        telemetryListeners: [listener],
      });
      await expect(
        shape(builder)
          .build()
          .execute(() => 'ok'),
      ).resolves.toBe('ok');
      const attempts = listener.events.filter((e) => e.eventName === 'ExecutionAttempt');
      expect(attempts.map((e) => [e.severity, (e.arguments as { attemptNumber: number }).attemptNumber])).toEqual([
        ['information', 0],
      ]);
    }
  });

  it('returns the first success without waiting', async () => {
    const { time, builder } = setup();
    const fn = failTimes(0, 'ok');
    await expect(builder.addRetry().build().execute(fn)).resolves.toBe('ok');
    expect(fn.calls).toBe(1);
    expect(time.pendingTimerCount).toBe(0);
  });

  it('makes maxRetryAttempts retries after the original call, then rethrows the last error', async () => {
    const { time, builder } = setup();
    const errors = [new Error('1'), new Error('2'), new Error('3'), new Error('4')];
    const fn = scripted<string>(...errors.map((e) => ({ throws: e })));
    const result = builder.addRetry({ maxRetryAttempts: 3, delay: 100 }).build().execute(fn);
    const settled = expect(result).rejects.toBe(errors[3]);
    await time.advanceAsync(300);
    await settled;
    expect(fn.calls).toBe(4);
  });

  it("waits 2 s, 4 s and 8 s between attempts with exponential backoff (the seeds' first case)", async () => {
    const { time, builder } = setup();
    const log: string[] = [];
    const pipeline = builder
      .addRetry({
        maxRetryAttempts: 3,
        backoffType: 'exponential',
        delay: 2_000,
        onRetry: ({ attemptNumber, retryDelay, outcome }) => {
          log.push(
            `Retry ${attemptNumber + 1} after ${retryDelay / 1000} seconds delay due to ${(outcome as { error: Error }).error.message}`,
          );
        },
      })
      .build();
    const fn = scripted<string>({ throws: new Error('404 (Not Found)') });
    const result = pipeline.execute(fn);
    const settled = expect(result).rejects.toThrow('404 (Not Found)');

    await time.advanceAsync(1_999);
    expect(fn.calls).toBe(1);
    await time.advanceAsync(1);
    expect(fn.calls).toBe(2);
    await time.advanceAsync(4_000);
    expect(fn.calls).toBe(3);
    await time.advanceAsync(7_999);
    expect(fn.calls).toBe(3);
    await time.advanceAsync(1);
    await settled;
    expect(fn.calls).toBe(4);
    expect(log).toEqual([
      'Retry 1 after 2 seconds delay due to 404 (Not Found)',
      'Retry 2 after 4 seconds delay due to 404 (Not Found)',
      'Retry 3 after 8 seconds delay due to 404 (Not Found)',
    ]);
  });

  it("retries transient network errors only, every 5 s, three times (the seeds' second case)", async () => {
    const { time, builder } = setup();
    const pipeline = builder
      .addRetry({
        maxRetryAttempts: 3,
        delay: 5_000,
        backoffType: 'constant',
        shouldHandle: handleTransientNetworkErrors,
      })
      .build();

    const transient = failTimes(3, 'paid', networkError('ECONNRESET'));
    const result = pipeline.execute(transient);
    expect(time.pendingDelays).toEqual([]);
    await time.advanceAsync(0);
    expect(time.pendingDelays).toEqual([5_000]);
    await time.advanceAsync(15_000);
    await expect(result).resolves.toBe('paid');
    expect(transient.calls).toBe(4);

    const permanent = failTimes(3, 'paid', new TypeError('card declined'));
    await expect(pipeline.execute(permanent)).rejects.toThrow('card declined');
    expect(permanent.calls).toBe(1);
  });

  it('grows linearly: delay × (attempt + 1)', async () => {
    const { result, delays } = await runRecordingDelays(
      {
        maxRetryAttempts: 3,
        delay: 100,
        backoffType: 'linear',
      },
      failTimes(3, 'x'),
      600,
    );
    expect(result).toBe('x');
    expect(delays).toEqual([100, 200, 300]);
  });

  it('caps computed delays at maxDelay', async () => {
    const { result, delays } = await runRecordingDelays(
      {
        maxRetryAttempts: 4,
        delay: 1_000,
        backoffType: 'exponential',
        maxDelay: 3_000,
      },
      failTimes(4, 'x'),
      20_000,
    );
    expect(result).toBe('x');
    expect(delays).toEqual([1_000, 2_000, 3_000, 3_000]);
  });

  it('applies ±25 % jitter to constant delays from the injected random source', async () => {
    const time = new FakeTimeProvider();
    const randoms = [0, 0.999999, 0.5];
    const delays: number[] = [];
    const pipeline = new ResiliencePipelineBuilder({ timeProvider: time, random: () => randoms.shift() ?? 0.5 })
      .addRetry({ maxRetryAttempts: 3, delay: 1_000, useJitter: true, onRetry: (a) => void delays.push(a.retryDelay) })
      .build();
    const result = pipeline.execute(failTimes(3, 'x'));
    await time.advanceAsync(10_000);
    await expect(result).resolves.toBe('x');
    expect(delays[0]).toBe(750);
    expect(delays[1]).toBeCloseTo(1_250, 0);
    expect(delays[2]).toBe(1_000);
  });

  it('uses delayGenerator when it returns a non-negative number, the backoff otherwise', async () => {
    const { result, delays } = await runRecordingDelays(
      {
        maxRetryAttempts: 3,
        delay: 100,
        delayGenerator: ({ attemptNumber }) => (attemptNumber === 1 ? undefined : attemptNumber === 2 ? -5 : 7),
      },
      failTimes(3, 'x'),
      1_000,
    );
    expect(result).toBe('x');
    expect(delays).toEqual([7, 100, 100]);
  });

  it('never waits for a timer when the delay is zero', async () => {
    const { time, builder } = setup();
    const fn = failTimes(5, 'x');
    await expect(builder.addRetry({ maxRetryAttempts: 5, delay: 0 }).build().execute(fn)).resolves.toBe('x');
    expect(fn.calls).toBe(6);
    expect(time.pendingTimerCount).toBe(0);
  });

  it('retries results that shouldHandle accepts, and returns the last result when retries run out', async () => {
    const builder = new ResiliencePipelineBuilder<{ status: number }>();
    const fn = scripted<{ status: number }>(
      { returns: { status: 503 } },
      { returns: { status: 503 } },
      { returns: { status: 200 } },
    );
    const pipeline = builder
      .addRetry({
        maxRetryAttempts: 1,
        delay: 0,
        shouldHandle: handleResult<{ status: number }>((r) => r.status >= 500),
      })
      .build();
    await expect(pipeline.execute(fn)).resolves.toEqual({ status: 503 });
    expect(fn.calls).toBe(2);
    await expect(pipeline.execute(fn)).resolves.toEqual({ status: 200 });
  });

  it('accepts an async shouldHandle', async () => {
    const { builder } = setup();
    const fn = failTimes(2, 'x');
    const pipeline = builder.addRetry({ delay: 0, shouldHandle: async ({ outcome }) => !outcome.ok }).build();
    await expect(pipeline.execute(fn)).resolves.toBe('x');
    expect(fn.calls).toBe(3);
  });

  it('retries synchronous functions and thrown non-Error values', async () => {
    const { builder } = setup();
    let calls = 0;
    const pipeline = builder.addRetry({ delay: 0 }).build();
    const result = await pipeline.execute(() => {
      calls++;
      if (calls === 1) throw 'a string';
      if (calls === 2) throw { code: 42 };
      if (calls === 3) throw undefined;
      return calls;
    });
    expect(result).toBe(4);
  });

  it('rethrows a thrown non-Error value untouched when retries run out', async () => {
    const { builder } = setup();
    const pipeline = builder.addRetry({ maxRetryAttempts: 1, delay: 0 }).build();
    await expect(
      pipeline.execute(() => {
        throw 7;
      }),
    ).rejects.toBe(7);
  });

  it('sets context.attemptNumber for each attempt and restores it afterwards', async () => {
    const { builder } = setup();
    const seen: number[] = [];
    const context = new ResilienceContext();
    const pipeline = builder.addRetry({ delay: 0 }).build();
    await pipeline.execute((ctx) => {
      seen.push(ctx.attemptNumber);
      if (seen.length < 3) throw new Error('again');
      return 'done';
    }, context);
    expect(seen).toEqual([0, 1, 2]);
    expect(context.attemptNumber).toBe(0);
  });

  it('passes the outcome, context, attempt, delay and duration to onRetry', async () => {
    const { time, builder } = setup();
    const calls: OnRetryArguments<unknown>[] = [];
    const error = new Error('slow failure');
    const pipeline = builder.addRetry({ maxRetryAttempts: 1, delay: 50, onRetry: (a) => void calls.push(a) }).build();
    const context = new ResilienceContext({ operationKey: 'op' });
    let first = true;
    const result = pipeline.execute(async () => {
      if (first) {
        first = false;
        await time.delay(30);
        throw error;
      }
      return 1;
    }, context);
    await time.advanceAsync(100);
    await expect(result).resolves.toBe(1);
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ attemptNumber: 0, retryDelay: 50, duration: 30, context });
    expect(calls[0].outcome).toEqual({ ok: false, error });
  });

  describe('cancellation', () => {
    it('stops waiting as soon as the caller aborts mid-sleep, and does not call again', async () => {
      const { time, builder } = setup();
      const controller = new AbortController();
      const fn = scripted<string>({ throws: new Error('down') });
      const result = builder.addRetry({ delay: 10_000 }).build().execute(fn, { signal: controller.signal });
      await time.advanceAsync(5_000);
      expect(time.pendingTimerCount).toBe(1);
      controller.abort(new Error('user gave up'));
      await expect(result).rejects.toThrow('user gave up');
      expect(fn.calls).toBe(1);
      expect(time.pendingTimerCount).toBe(0);
    });

    it('never retries a call that failed because the caller aborted mid-call', async () => {
      const { time, builder } = setup();
      const controller = new AbortController();
      let calls = 0;
      const result = builder
        .addRetry({ delay: 0, shouldHandle: () => true })
        .build()
        .execute(
          ({ signal }) => {
            calls++;
            return time.delay(1_000, signal).then(() => 'late');
          },
          { signal: controller.signal },
        );
      await time.advanceAsync(10);
      controller.abort();
      await expect(result).rejects.toMatchObject({ name: 'AbortError' });
      expect(calls).toBe(1);
    });

    it('does not run the callback at all when the signal is already aborted', async () => {
      const { builder } = setup();
      const fn = failTimes(0, 'x');
      const signal = AbortSignal.abort(new Error('too late'));
      await expect(builder.addRetry().build().execute(fn, { signal })).rejects.toThrow('too late');
      expect(fn.calls).toBe(0);
    });

    it('does not retry a cancellation error thrown by the callback itself (default predicate)', async () => {
      const { builder } = setup();
      const fn = scripted<string>({ throws: new DOMException('aborted', 'AbortError') });
      await expect(builder.addRetry({ delay: 0 }).build().execute(fn)).rejects.toMatchObject({ name: 'AbortError' });
      expect(fn.calls).toBe(1);
    });
  });

  describe('open circuits and Retry-After', () => {
    it('does not retry BrokenCircuitError or IsolatedCircuitError by default, even with a catch-all predicate', async () => {
      const { builder } = setup();
      const pipeline = builder.addRetry({ delay: 0, shouldHandle: () => true }).build();
      const broken = scripted<string>({ throws: new BrokenCircuitError(undefined, 5_000) });
      const isolated = scripted<string>({ throws: new IsolatedCircuitError() });
      await expect(pipeline.execute(broken)).rejects.toBeInstanceOf(BrokenCircuitError);
      await expect(pipeline.execute(isolated)).rejects.toBeInstanceOf(IsolatedCircuitError);
      expect(broken.calls + isolated.calls).toBe(2);
    });

    it('retries an open circuit when opted in, waiting its retryAfter', async () => {
      const { time, builder } = setup();
      const fn = scripted<string>({ throws: new BrokenCircuitError(undefined, 4_000) }, { returns: 'closed again' });
      const result = builder.addRetry({ delay: 100, retryOnBrokenCircuit: true }).build().execute(fn);
      await time.advanceAsync(3_999);
      expect(fn.calls).toBe(1);
      await time.advanceAsync(1);
      await expect(result).resolves.toBe('closed again');
    });

    it('honours a retryAfter carried by any error, capped by maxDelay', async () => {
      const throttled = Object.assign(new Error('429'), { retryAfter: 60_000 });
      const { result, delays } = await runRecordingDelays(
        { delay: 100, maxDelay: 10_000 },
        scripted({ throws: throttled }, { returns: 'ok' }),
        10_000,
      );
      expect(result).toBe('ok');
      expect(delays).toEqual([10_000]);
    });

    it('ignores retryAfter when honorRetryAfter is false', async () => {
      const throttled = Object.assign(new Error('429'), { retryAfter: 60_000 });
      const { result, delays } = await runRecordingDelays(
        { delay: 100, honorRetryAfter: false },
        scripted({ throws: throttled }, { returns: 'ok' }),
        100,
      );
      expect(result).toBe('ok');
      expect(delays).toEqual([100]);
    });

    it('reads retryAfter from results through the extractor', async () => {
      const time = new FakeTimeProvider();
      const builder = new ResiliencePipelineBuilder<{ status: number; wait?: number }>({ timeProvider: time });
      const fn = scripted<{ status: number; wait?: number }>(
        { returns: { status: 429, wait: 1_500 } },
        { returns: { status: 200 } },
      );
      const pipeline = builder
        .addRetry({
          delay: 10,
          shouldHandle: handleResult<{ status: number; wait?: number }>((r) => r.status === 429),
          retryAfter: ({ outcome }) => (outcome.ok ? outcome.value.wait : undefined),
        })
        .build();
      const result = pipeline.execute(fn);
      await time.advanceAsync(1_499);
      expect(fn.calls).toBe(1);
      await time.advanceAsync(1);
      await expect(result).resolves.toEqual({ status: 200 });
    });

    it('gives up at once, with the real error, when the wait would pass an enclosing timeout', async () => {
      const { time } = setup();
      const listener = new RecordingListener();
      const pipeline = new ResiliencePipelineBuilder({ timeProvider: time, telemetryListeners: [listener] })
        .addTimeout(5_000)
        .addRetry({ delay: 1_000 })
        .build();
      const throttled = Object.assign(new Error('try in a minute'), { retryAfter: 60_000 });
      const fn = scripted<string>({ throws: throttled });
      const result = pipeline.execute(fn);
      await expect(result).rejects.toBe(throttled);
      expect(fn.calls).toBe(1);
      expect(time.pendingTimerCount).toBe(0);
      const giveUp = listener.events.find((e) => e.eventName === 'OnRetryGiveUp');
      expect(giveUp?.arguments).toMatchObject({ reason: 'deadline' });
    });
  });

  it('reports attempts and retries to telemetry listeners', async () => {
    const time = new FakeTimeProvider();
    const listener = new RecordingListener();
    const pipeline = new ResiliencePipelineBuilder({
      name: 'orders',
      timeProvider: time,
      telemetryListeners: [listener],
    })
      .addRetry({ name: 'order-retry', maxRetryAttempts: 1, delay: 0 })
      .build();
    await expect(pipeline.execute(scripted({ throws: new Error('x') }))).rejects.toThrow('x');
    expect(listener.names()).toEqual([
      'PipelineExecuting',
      'ExecutionAttempt',
      'OnRetry',
      'ExecutionAttempt',
      'OnRetryGiveUp',
      'PipelineExecuted',
    ]);
    expect(listener.events[1].source).toEqual({
      pipelineName: 'orders',
      pipelineInstanceName: undefined,
      strategyName: 'order-retry',
      strategyType: 'retry',
    });
  });

  it('keeps pending work pending until time advances', async () => {
    const { time, builder } = setup();
    const result = builder.addRetry({ delay: 1_000 }).build().execute(failTimes(1, 'x'));
    await time.advanceAsync(999);
    expect(await isPending(result)).toBe(true);
    await time.advanceAsync(1);
    await expect(result).resolves.toBe('x');
  });
});
