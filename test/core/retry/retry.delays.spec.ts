import { describe, expect, it } from '@jest/globals';
import {
  MAX_TIMER_DELAY,
  ResilienceContext,
  ResiliencePipelineBuilder,
  RetryBudget,
  type RetryStrategyOptions,
} from '../../../src/core.entry.js';
import { FakeTimeProvider } from '../../../src/testing/index.js';
import { failTimes, scripted } from '../../utils/flaky.js';
import { RecordingListener } from '../../utils/recording.listener.js';

const down = new Error('down');

/** The delays a retry waits before each retry (read from telemetry, so no callback changes the path). */
async function delaysOf(options: RetryStrategyOptions, fn: () => Promise<unknown>): Promise<number[]> {
  const time = new FakeTimeProvider();
  const listener = new RecordingListener();
  const pipeline = new ResiliencePipelineBuilder({
    timeProvider: time,
    telemetryListeners: [listener],
    random: () => 0.5,
  })
    .addRetry(options)
    .build();
  const running = pipeline.execute(fn).then(
    () => undefined,
    () => undefined,
  );
  while (time.pendingTimerCount > 0 || listener.events.at(-1)?.eventName !== 'PipelineExecuted') {
    await time.advanceAsync(1_000);
  }
  await running;
  return listener.events
    .filter((e) => e.eventName === 'OnRetry')
    .map((e) => (e.arguments as { retryDelay: number }).retryDelay);
}

const withRetryAfter = (retryAfter: number): Error => Object.assign(new Error('throttled'), { retryAfter });

describe('retry: where each delay comes from', () => {
  describe('a retryAfter carried by the error', () => {
    it('is honoured down to zero: a retryAfter of 0 retries at once', async () => {
      expect(await delaysOf({ maxRetryAttempts: 1, delay: 500 }, scripted({ throws: withRetryAfter(0) }))).toEqual([0]);
    });

    it('a negative or non-finite retryAfter falls back to the backoff', async () => {
      expect(
        await delaysOf(
          { maxRetryAttempts: 2, delay: 500 },
          scripted({ throws: withRetryAfter(-1) }, { throws: withRetryAfter(Number.NaN) }),
        ),
      ).toEqual([500, 500]);
    });

    it('is honoured with a delay generator too when the generator has no answer, and capped by maxDelay', async () => {
      expect(
        await delaysOf(
          { maxRetryAttempts: 2, delay: 100, maxDelay: 2_000, delayGenerator: () => undefined },
          scripted({ throws: withRetryAfter(700) }, { throws: withRetryAfter(9_000) }),
        ),
      ).toEqual([700, 2_000]);
    });

    it('is ignored with a delay generator when honorRetryAfter is false', async () => {
      expect(
        await delaysOf(
          { maxRetryAttempts: 1, delay: 100, honorRetryAfter: false, delayGenerator: () => undefined },
          scripted({ throws: withRetryAfter(700) }),
        ),
      ).toEqual([100]);
    });

    it('a retryAfter of 0 with a delay generator that has no answer retries at once', async () => {
      expect(
        await delaysOf(
          { maxRetryAttempts: 1, delay: 100, delayGenerator: () => undefined },
          scripted({ throws: withRetryAfter(0) }),
        ),
      ).toEqual([0]);
    });

    it('a handled result has no retryAfter of its own: the backoff applies', async () => {
      expect(
        await delaysOf(
          { maxRetryAttempts: 1, delay: 300, shouldHandle: ({ outcome }) => outcome.ok },
          scripted({ returns: Object.assign({}, { retryAfter: 5 }) }),
        ),
      ).toEqual([300]);
      expect(
        await delaysOf(
          { maxRetryAttempts: 1, delay: 300, shouldHandle: ({ outcome }) => outcome.ok, onRetry: () => undefined },
          scripted({ returns: Object.assign({}, { retryAfter: 5 }) }),
        ),
      ).toEqual([300]);
    });

    it('the retryAfter extractor wins over the error property, and its negative answer means none', async () => {
      expect(
        await delaysOf(
          {
            maxRetryAttempts: 2,
            delay: 100,
            retryAfter: ({ attemptNumber }) => (attemptNumber === 0 ? 40 : -1),
          },
          scripted({ throws: withRetryAfter(9_000) }),
        ),
      ).toEqual([40, 100]);
    });
  });

  describe('delayGenerator', () => {
    it('its 0 retries at once, its NaN falls back to the backoff', async () => {
      expect(
        await delaysOf(
          { maxRetryAttempts: 2, delay: 250, delayGenerator: ({ attemptNumber }) => (attemptNumber === 0 ? 0 : NaN) },
          scripted({ throws: down }),
        ),
      ).toEqual([0, 250]);
    });

    it('is not capped by maxDelay, only by the largest timer delay; may answer asynchronously', async () => {
      const generated = [5_000, MAX_TIMER_DELAY * 2];
      const time = new FakeTimeProvider();
      const seen: number[] = [];
      const pipeline = new ResiliencePipelineBuilder({ timeProvider: time })
        .addRetry({
          maxRetryAttempts: 2,
          delay: 10,
          maxDelay: 1_000,
          delayGenerator: async ({ attemptNumber }) => generated[attemptNumber],
          onRetry: ({ retryDelay }) => void seen.push(retryDelay),
        })
        .build();
      const fn = scripted<string>({ throws: down }, { throws: down }, { returns: 'ok' });
      const running = pipeline.execute(fn);
      await time.advanceAsync(5_000);
      expect(fn.calls).toBe(2);
      await time.advanceAsync(MAX_TIMER_DELAY);
      await expect(running).resolves.toBe('ok');
      expect(seen).toEqual([5_000, MAX_TIMER_DELAY]);
    });
  });

  describe('backoff without callbacks', () => {
    it('exponential with jitter keeps its state per call: the same sequence on every call', async () => {
      const options: RetryStrategyOptions = {
        maxRetryAttempts: 3,
        delay: 100,
        backoffType: 'exponential',
        useJitter: true,
      };
      const first = await delaysOf(options, scripted({ throws: down }));
      const second = await delaysOf(options, scripted({ throws: down }));
      expect(first).toHaveLength(3);
      expect(second).toEqual(first);
      expect(new Set(first).size).toBe(3);
    });

    it('exponential with jitter runs without telemetry or callbacks, and a later call starts from scratch', async () => {
      const time = new FakeTimeProvider();
      const pipeline = new ResiliencePipelineBuilder({ timeProvider: time, random: () => 0.5 })
        .addRetry({ maxRetryAttempts: 2, delay: 100, backoffType: 'exponential', useJitter: true })
        .build();
      for (let round = 0; round < 2; round++) {
        const fn = failTimes(2, 'ok');
        const running = pipeline.execute(fn);
        await time.advanceAsync(10_000);
        await expect(running).resolves.toBe('ok');
        expect(fn.calls).toBe(3);
      }
    });

    it('linear: delay × (attempt + 1) from the first retry', async () => {
      expect(
        await delaysOf({ maxRetryAttempts: 3, delay: 100, backoffType: 'linear' }, scripted({ throws: down })),
      ).toEqual([100, 200, 300]);
    });
  });
});

describe('retry: attempts, events and budgets', () => {
  it('reports handled attempts as warnings and the final unhandled one as information', async () => {
    const listener = new RecordingListener();
    const pipeline = new ResiliencePipelineBuilder({ telemetryListeners: [listener] })
      .addRetry({ maxRetryAttempts: 3, delay: 0 })
      .build();
    await expect(pipeline.execute(failTimes(1, 'ok'))).resolves.toBe('ok');
    expect(
      listener.events
        .filter((e) => e.eventName === 'ExecutionAttempt')
        .map((e) => [
          e.severity,
          (e.arguments as { attemptNumber: number; handled: boolean }).attemptNumber,
          (e.arguments as { handled: boolean }).handled,
        ]),
    ).toEqual([
      ['warning', 0, true],
      ['information', 1, false],
    ]);
    expect(listener.events.find((e) => e.eventName === 'OnRetry')?.severity).toBe('warning');
  });

  it('gives up after the last attempt with an error event naming the reason and the attempt', async () => {
    const listener = new RecordingListener();
    const pipeline = new ResiliencePipelineBuilder({ telemetryListeners: [listener] })
      .addRetry({ maxRetryAttempts: 2, delay: 0 })
      .build();
    await expect(pipeline.execute(scripted({ throws: down }))).rejects.toBe(down);
    const giveUp = listener.events.filter((e) => e.eventName === 'OnRetryGiveUp');
    expect(giveUp.map((e) => [e.severity, e.arguments])).toEqual([
      ['error', { outcome: { ok: false, error: down }, attemptNumber: 2, reason: 'max-attempts' }],
    ]);
  });

  it('maxRetryAttempts 0 runs the call once and gives up', async () => {
    const fn = scripted<string>({ throws: down });
    await expect(new ResiliencePipelineBuilder().addRetry({ maxRetryAttempts: 0 }).build().execute(fn)).rejects.toBe(
      down,
    );
    expect(fn.calls).toBe(1);
  });

  it('an inner pipeline on the same context counts its own attempts from 0; the outer count is restored', async () => {
    const inner = new ResiliencePipelineBuilder().addRetry({ maxRetryAttempts: 1, delay: 0 }).build();
    const outer = new ResiliencePipelineBuilder().addRetry({ maxRetryAttempts: 1, delay: 0 }).build();
    const seen: string[] = [];
    const context = new ResilienceContext();
    await outer.execute(async (ctx) => {
      const outerAttempt = ctx.attemptNumber;
      seen.push(`outer ${outerAttempt}`);
      if (outerAttempt === 0) throw down;
      await inner.execute(async (c) => {
        seen.push(`inner ${c.attemptNumber}`);
        if (c.attemptNumber === 0) throw down;
      }, ctx);
      seen.push(`outer again ${ctx.attemptNumber}`);
    }, context);
    expect(seen).toEqual(['outer 0', 'outer 1', 'inner 0', 'inner 1', 'outer again 1']);
    expect(context.attemptNumber).toBe(0);
  });

  it('budget options build a budget on the pipeline clock: it refills as that clock moves', async () => {
    const time = new FakeTimeProvider();
    const pipeline = new ResiliencePipelineBuilder({ timeProvider: time })
      .addRetry({ maxRetryAttempts: 5, delay: 0, budget: { ratio: 0, minRetriesPerSecond: 0.1, window: 10_000 } })
      .build();
    const fn = scripted<string>({ throws: down });
    await expect(pipeline.execute(fn)).rejects.toBe(down);
    expect(fn.calls).toBe(2); // one retry per 10 s
    await expect(pipeline.execute(fn)).rejects.toBe(down);
    expect(fn.calls).toBe(3);
    time.advance(10_000);
    await expect(pipeline.execute(fn)).rejects.toBe(down);
    expect(fn.calls).toBe(5);
  });

  it('a budget allows exactly ratio × calls + floor retries in its window', () => {
    const time = new FakeTimeProvider();
    const budget = new RetryBudget({ ratio: 0.5, minRetriesPerSecond: 0.1, window: 10_000 }, time);
    for (let i = 0; i < 4; i++) budget.recordCall();
    expect(budget.statistics).toEqual({ calls: 4, retries: 0, allowed: 3 });
    expect([budget.tryWithdraw(), budget.tryWithdraw(), budget.tryWithdraw(), budget.tryWithdraw()]).toEqual([
      true,
      true,
      true,
      false,
    ]);
    expect(budget.statistics).toEqual({ calls: 4, retries: 3, allowed: 3 });
    time.advance(10_000);
    expect(budget.statistics).toEqual({ calls: 0, retries: 0, allowed: 1 });
  });

  it('a default budget allows one retry per five calls plus ten per second over ten seconds', () => {
    const time = new FakeTimeProvider();
    const budget = new RetryBudget(undefined, time);
    for (let i = 0; i < 50; i++) budget.recordCall();
    expect(budget.statistics).toEqual({ calls: 50, retries: 0, allowed: 110 });
    time.advance(9_999);
    expect(budget.statistics.calls).toBe(50);
    time.advance(1_001);
    expect(budget.statistics).toEqual({ calls: 0, retries: 0, allowed: 100 });
  });

  it('a budget spent by the retries of one call ends that call with its last outcome and reason budget', async () => {
    const listener = new RecordingListener();
    const time = new FakeTimeProvider();
    const budget = new RetryBudget({ ratio: 0, minRetriesPerSecond: 0.2, window: 10_000 }, time);
    const pipeline = new ResiliencePipelineBuilder({ timeProvider: time, telemetryListeners: [listener] })
      .addRetry({ maxRetryAttempts: 5, delay: 0, budget })
      .build();
    const last = new Error('third');
    const fn = scripted<string>({ throws: down }, { throws: down }, { throws: last });
    await expect(pipeline.execute(fn)).rejects.toBe(last);
    expect(fn.calls).toBe(3);
    expect(listener.events.find((e) => e.eventName === 'OnRetryGiveUp')?.arguments).toMatchObject({
      attemptNumber: 2,
      reason: 'budget',
    });
  });
});

describe('retry next to a timeout (one inline run)', () => {
  const build = (options: RetryStrategyOptions<string>) =>
    new ResiliencePipelineBuilder<string>().addRetry(options).addTimeout(10_000).build();

  it('retries a result its shouldHandle accepts', async () => {
    const fn = scripted<string>({ returns: 'bad' }, { returns: 'good' });
    await expect(
      build({ delay: 0, shouldHandle: ({ outcome }) => outcome.ok && outcome.value === 'bad' }).execute(fn),
    ).resolves.toBe('good');
    expect(fn.calls).toBe(2);
  });

  it('returns a value at once with the default predicate, and retries failures', async () => {
    const fn = scripted<string>({ throws: down }, { returns: 'second' });
    const seen: number[] = [];
    await expect(
      build({ delay: 0 }).execute((ctx) => {
        seen.push(ctx.attemptNumber);
        return fn();
      }),
    ).resolves.toBe('second');
    expect(seen).toEqual([0, 1]);
  });

  it('counts each call in its budget', async () => {
    const time = new FakeTimeProvider();
    const budget = new RetryBudget({ ratio: 0, minRetriesPerSecond: 0, window: 10_000 }, time);
    const pipeline = new ResiliencePipelineBuilder({ timeProvider: time })
      .addRetry({ budget })
      .addTimeout(1_000)
      .build();
    await pipeline.execute(async () => 'a');
    await pipeline.execute(async () => 'b');
    expect(budget.statistics).toEqual({ calls: 2, retries: 0, allowed: 0 });
    await expect(pipeline.execute(() => Promise.reject(down))).rejects.toBe(down);
    expect(budget.statistics).toEqual({ calls: 3, retries: 0, allowed: 0 });
  });
});

describe('retry: answers that are not numbers, and options left out', () => {
  it('a delay generator or retryAfter extractor answering a string falls back to the backoff', async () => {
    expect(
      await delaysOf(
        { maxRetryAttempts: 1, delay: 120, delayGenerator: () => '5' as unknown as number },
        scripted({ throws: down }),
      ),
    ).toEqual([120]);
    expect(
      await delaysOf(
        { maxRetryAttempts: 1, delay: 130, retryAfter: () => '7' as unknown as number },
        scripted({ throws: down }),
      ),
    ).toEqual([130]);
  });

  it('honorRetryAfter false ignores an error retryAfter without callbacks too; true honours it', async () => {
    const throttled = () => scripted({ throws: withRetryAfter(900) });
    expect(await delaysOf({ maxRetryAttempts: 1, delay: 100, honorRetryAfter: false }, throttled())).toEqual([100]);
    expect(await delaysOf({ maxRetryAttempts: 1, delay: 100, honorRetryAfter: true }, throttled())).toEqual([900]);
  });

  it('without a budget, retries are not capped: 150 immediate retries all run', async () => {
    const fn = scripted<string>({ throws: down });
    await expect(
      new ResiliencePipelineBuilder().addRetry({ maxRetryAttempts: 150, delay: 0 }).build().execute(fn),
    ).rejects.toBe(down);
    expect(fn.calls).toBe(151);
  });
});
