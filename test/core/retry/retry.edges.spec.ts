import { describe, expect, it } from '@jest/globals';
import {
  MAX_TIMER_DELAY,
  ResiliencePipelineBuilder,
  RetryBudget,
  type OnRetryArguments,
} from '../../../src/core.entry.js';
import { FakeTimeProvider } from '../../../src/testing/index.js';
import { scripted } from '../../utils/flaky.js';
import { RecordingListener } from '../../utils/recording.listener.js';
import { strategyProblems } from '../../utils/validation-problems.js';

const down = new Error('down');

describe('retry: behaviours at the edges', () => {
  describe('cancellation', () => {
    it('an abort during a delay-0 loop ends it before the next attempt', async () => {
      const time = new FakeTimeProvider();
      const controller = new AbortController();
      const fn = scripted<string>({ throws: down });
      const retries: number[] = [];
      const pipeline = new ResiliencePipelineBuilder({ timeProvider: time })
        .addRetry({
          delay: 0,
          maxRetryAttempts: 5,
          onRetry: ({ attemptNumber }) => {
            retries.push(attemptNumber);
            if (attemptNumber === 1) controller.abort(new Error('caller left'));
          },
        })
        .build();
      await expect(pipeline.execute(fn, { signal: controller.signal })).rejects.toThrow('caller left');
      expect(fn.calls).toBe(2);
      expect(retries).toEqual([0, 1]);
      expect(time.pendingTimerCount).toBe(0);
    });

    it('an abort during a delay-0 loop starts no further attempt: none reported, none through the inner strategies', async () => {
      const controller = new AbortController();
      const listener = new RecordingListener();
      let innerRuns = 0;
      const pipeline = new ResiliencePipelineBuilder({
        timeProvider: new FakeTimeProvider(),
        telemetryListeners: [listener],
      })
        .addRetry({
          delay: 0,
          maxRetryAttempts: 5,
          onRetry: ({ attemptNumber }) => {
            if (attemptNumber === 1) controller.abort(new Error('caller left'));
          },
        })
        .addStrategy({
          type: 'counting',
          options: {},
          create: () => ({
            execute: (next, context) => {
              innerRuns++;
              return next(context);
            },
          }),
        })
        .build();
      await expect(pipeline.execute(() => Promise.reject(down), { signal: controller.signal })).rejects.toThrow(
        'caller left',
      );
      expect(innerRuns).toBe(2);
      const attempts = listener.events.filter((e) => e.eventName === 'ExecutionAttempt');
      expect(attempts.map((e) => (e.arguments as { attemptNumber: number }).attemptNumber)).toEqual([0, 1]);
    });

    it('onRetry is not called for an attempt that ended with the caller aborting', async () => {
      const time = new FakeTimeProvider();
      const controller = new AbortController();
      const retries: number[] = [];
      let calls = 0;
      const pipeline = new ResiliencePipelineBuilder({ timeProvider: time })
        .addRetry({ delay: 10, shouldHandle: () => true, onRetry: (a) => void retries.push(a.attemptNumber) })
        .build();
      const result = pipeline.execute(
        () => {
          calls++;
          if (calls === 2) controller.abort();
          return Promise.reject(down);
        },
        { signal: controller.signal },
      );
      const settled = expect(result).rejects.toBe(down);
      await time.advanceAsync(10);
      await settled;
      expect(calls).toBe(2);
      expect(retries).toEqual([0]);
    });

    it('onRetry is not called again once the caller aborts during the wait', async () => {
      const time = new FakeTimeProvider();
      const controller = new AbortController();
      const retries: number[] = [];
      const fn = scripted<string>({ throws: down });
      const result = new ResiliencePipelineBuilder({ timeProvider: time })
        .addRetry({ delay: 100, onRetry: (a) => void retries.push(a.attemptNumber) })
        .build()
        .execute(fn, { signal: controller.signal });
      const settled = expect(result).rejects.toThrow('gone');
      await time.advanceAsync(50);
      controller.abort(new Error('gone'));
      await settled;
      await time.advanceAsync(1_000);
      expect(retries).toEqual([0]);
      expect(fn.calls).toBe(1);
    });
  });

  describe('durations', () => {
    it('hands each attempt duration to onRetry and to telemetry (ExecutionAttempt and OnRetry)', async () => {
      const time = new FakeTimeProvider();
      const listener = new RecordingListener();
      const seen: OnRetryArguments<unknown>[] = [];
      const durations = [30, 70, 5];
      let call = 0;
      const pipeline = new ResiliencePipelineBuilder({ timeProvider: time, telemetryListeners: [listener] })
        .addRetry({ maxRetryAttempts: 2, delay: 10, onRetry: (a) => void seen.push(a) })
        .build();
      const result = pipeline.execute(async () => {
        await time.delay(durations[call++]);
        throw down;
      });
      const settled = expect(result).rejects.toBe(down);
      await time.advanceAsync(30 + 10 + 70 + 10 + 5);
      await settled;
      expect(seen.map((a) => [a.attemptNumber, a.duration, a.retryDelay])).toEqual([
        [0, 30, 10],
        [1, 70, 10],
      ]);
      const attempts = listener.events.filter((e) => e.eventName === 'ExecutionAttempt');
      expect(attempts.map((e) => (e.arguments as { duration: number }).duration)).toEqual([30, 70, 5]);
      const retries = listener.events.filter((e) => e.eventName === 'OnRetry');
      expect(retries.map((e) => (e.arguments as { duration: number }).duration)).toEqual([30, 70]);
    });

    it('times attempts for telemetry alone, without onRetry', async () => {
      const time = new FakeTimeProvider();
      const listener = new RecordingListener();
      const pipeline = new ResiliencePipelineBuilder({ timeProvider: time, telemetryListeners: [listener] })
        .addRetry({ maxRetryAttempts: 1, delay: 0 })
        .build();
      const result = pipeline.execute(async () => {
        await time.delay(40);
        throw down;
      });
      const settled = expect(result).rejects.toBe(down);
      await time.advanceAsync(80);
      await settled;
      const retry = listener.events.find((e) => e.eventName === 'OnRetry');
      expect(retry?.arguments).toMatchObject({ duration: 40, retryDelay: 0, attemptNumber: 0 });
    });
  });

  describe('deadline of an enclosing timeout', () => {
    it('a retry whose wait fits before the deadline is made', async () => {
      const time = new FakeTimeProvider();
      const fn = scripted<string>({ throws: down }, { returns: 'second' });
      const result = new ResiliencePipelineBuilder({ timeProvider: time })
        .addTimeout(5_000)
        .addRetry({ delay: 4_999 })
        .build()
        .execute(fn);
      await time.advanceAsync(4_999);
      await expect(result).resolves.toBe('second');
      expect(fn.calls).toBe(2);
    });

    it('a wait ending exactly at the deadline is not made: that attempt could not finish', async () => {
      const time = new FakeTimeProvider();
      const fn = scripted<string>({ throws: down });
      const result = new ResiliencePipelineBuilder({ timeProvider: time })
        .addTimeout(5_000)
        .addRetry({ delay: 5_000 })
        .build()
        .execute(fn);
      await expect(result).rejects.toBe(down);
      expect(fn.calls).toBe(1);
      expect(time.pendingTimerCount).toBe(0);
    });

    it('an aggressive timeout hands its deadline to the inner retry too', async () => {
      const time = new FakeTimeProvider();
      const fn = scripted<string>({ throws: down });
      const aggressive = (delay: number) =>
        new ResiliencePipelineBuilder({ timeProvider: time })
          .addTimeout({ timeout: 1_000, mode: 'aggressive' })
          .addRetry({ delay })
          .build();
      await expect(aggressive(1_001).execute(fn)).rejects.toBe(down);
      expect(fn.calls).toBe(1);
      expect(time.pendingTimerCount).toBe(0);

      const fits = scripted<string>({ throws: down }, { returns: 'ok' });
      const running = aggressive(999).execute(fits);
      await time.advanceAsync(999);
      await expect(running).resolves.toBe('ok');
    });

    it('the tighter of two nested deadlines applies', async () => {
      const time = new FakeTimeProvider();
      const fn = scripted<string>({ throws: down });
      const pipeline = new ResiliencePipelineBuilder({ timeProvider: time })
        .addTimeout(500)
        .addTimeout(10_000)
        .addRetry({ delay: 600 })
        .build();
      await expect(pipeline.execute(fn)).rejects.toBe(down);
      expect(fn.calls).toBe(1);
    });
  });
});

const problems = (options: Record<string, unknown>) => strategyProblems('retry', (b) => b.addRetry(options));

describe('retry options', () => {
  const duration = `must be a number >= 0 and <= ${MAX_TIMER_DELAY}`;
  const notADuration = 'must be a duration: milliseconds, or in configuration "200ms", "2s", "1m", "00:00:30"';
  it.each<[Record<string, unknown>, string, string]>([
    [{ name: '' }, 'name', 'must be a non-empty string'],
    [{ maxRetryAttempts: -1 }, 'maxRetryAttempts', 'must be an integer >= 0'],
    [{ maxRetryAttempts: 1.5 }, 'maxRetryAttempts', 'must be an integer >= 0'],
    [{ maxRetryAttempts: -Infinity }, 'maxRetryAttempts', 'must be an integer >= 0'],
    [{ maxRetryAttempts: Number.NaN }, 'maxRetryAttempts', 'must be an integer >= 0'],
    [{ delay: -1 }, 'delay', duration],
    [{ delay: MAX_TIMER_DELAY + 1 }, 'delay', duration],
    [{ delay: '1s-ish' }, 'delay', notADuration],
    [{ backoffType: 'fibonacci' }, 'backoffType', 'must be one of "constant", "linear", "exponential"'],
    [{ useJitter: 1 }, 'useJitter', 'must be a boolean'],
    [{ maxDelay: -1 }, 'maxDelay', duration],
    [{ delayGenerator: 1 }, 'delayGenerator', 'must be a function'],
    [{ shouldHandle: 'all' }, 'shouldHandle', 'must be a function'],
    [{ onRetry: {} }, 'onRetry', 'must be a function'],
    [{ retryOnBrokenCircuit: 'no' }, 'retryOnBrokenCircuit', 'must be a boolean'],
    [{ honorRetryAfter: 0 }, 'honorRetryAfter', 'must be a boolean'],
    [{ retryAfter: 5 }, 'retryAfter', 'must be a function'],
    [{ random: 0.5 }, 'random', 'must be a function'],
    [{ budget: 3 }, 'budget', 'must be a RetryBudget or its options'],
    [{ budget: null }, 'budget', 'must be a RetryBudget or its options'],
    [{ budget: { ratio: -0.1 } }, 'budget.ratio', 'must be a number >= 0'],
    [{ budget: { minRetriesPerSecond: -1 } }, 'budget.minRetriesPerSecond', 'must be a number >= 0'],
    [{ budget: { window: 9 } }, 'budget.window', `must be a number >= 10 and <= ${MAX_TIMER_DELAY}`],
    [{ budget: { rate: 1 } }, 'budget.rate', 'is not a known option'],
    [{ maxDelay: 99, delay: 100 }, 'maxDelay', 'must be >= delay (100)'],
    [{ maxDelay: 0, delay: 100 }, 'maxDelay', 'must be >= delay (100)'],
    // A delay that is not a number is reported as such, not also compared with the other.
    [{ maxDelay: '50', delay: 100 }, 'maxDelay', notADuration],
    [{ delay: '200', maxDelay: 100 }, 'delay', notADuration],
    [{ retries: 3 }, 'retries', 'is not a known option'],
  ])('%j is rejected at %s', (options, path, rule) => {
    expect(problems(options)).toEqual([{ path, rule }]);
  });

  it.each<Record<string, unknown>>([
    { maxRetryAttempts: 0 },
    { maxRetryAttempts: Infinity },
    { delay: 0 },
    { delay: MAX_TIMER_DELAY },
    { maxDelay: 100, delay: 100 },
    { maxDelay: 0 },
    { budget: { ratio: 0, minRetriesPerSecond: 0, window: 10 } },
    { budget: new RetryBudget({ ratio: 0.1 }) },
  ])('%j builds', (options) => {
    expect(problems(options)).toEqual([]);
  });

  it('a negative maxDelay is reported once, as out of range, not also as smaller than delay', () => {
    expect(problems({ maxDelay: -5, delay: 100 })).toEqual([{ path: 'maxDelay', rule: duration }]);
  });
});
