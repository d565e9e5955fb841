import { describe, expect, it, jest } from '@jest/globals';
import { getEventListeners } from 'node:events';
import {
  DEFAULT_HEDGING_DELAY,
  DEFAULT_MAX_HEDGED_ATTEMPTS,
  ResilienceContext,
  ResiliencePipelineBuilder,
  ResiliencePropertyKey,
  type ResilienceEvent,
} from '../../../src/core.entry.js';
import { FakeTimeProvider } from '../../../src/testing/index.js';
import { deferred } from '../../utils/flaky.js';
import { strategyProblems } from '../../utils/validation-problems.js';

type HedgingOptions = Parameters<ResiliencePipelineBuilder<string>['addHedging']>[0];

function setup(options: HedgingOptions = {}, listen = true) {
  const time = new FakeTimeProvider();
  const events: ResilienceEvent[] = [];
  const pipeline = new ResiliencePipelineBuilder<string>({
    timeProvider: time,
    telemetryListeners: listen
      ? [
          {
            write: (e) =>
              void (e.eventName !== 'PipelineExecuting' && e.eventName !== 'PipelineExecuted' && events.push(e)),
          },
        ]
      : [],
  })
    .addHedging(options)
    .build();
  return { time, pipeline, events };
}

/** Each attempt waits `ms[attempt]` on the fake clock (honouring its signal), then answers or fails. */
function attempts(time: FakeTimeProvider, ms: number[], fail: (attempt: number) => boolean = () => false) {
  const started: number[] = [];
  const reasons: unknown[] = [];
  const callback = (ctx: ResilienceContext) => {
    const n = ctx.attemptNumber;
    started.push(n);
    return time.delay(ms[n] ?? ms[ms.length - 1], ctx.signal).then(
      () => {
        if (fail(n)) throw new Error(`attempt ${n} failed`);
        return `attempt ${n}`;
      },
      (reason: unknown) => {
        reasons.push(reason);
        throw reason;
      },
    );
  };
  return { callback, started, reasons };
}

describe('hedging defaults', () => {
  it('hedges once, after 2 s', async () => {
    expect([DEFAULT_HEDGING_DELAY, DEFAULT_MAX_HEDGED_ATTEMPTS]).toEqual([2_000, 1]);
    const { time, pipeline } = setup();
    const { callback, started } = attempts(time, [10_000]);
    const result = pipeline.execute(callback);
    await time.advanceAsync(1_999);
    expect(started).toEqual([0]);
    await time.advanceAsync(1);
    expect(started).toEqual([0, 1]);
    await time.advanceAsync(10_000);
    await expect(result).resolves.toBe('attempt 0');
    expect(started).toEqual([0, 1]);
    expect(time.pendingTimerCount).toBe(0);
  });

  it('takes a NaN from the delay generator as the default delay, and asks it per hedge', async () => {
    const asked: number[] = [];
    const { time, pipeline } = setup({
      maxHedgedAttempts: 2,
      delayGenerator: ({ attemptNumber }) => (asked.push(attemptNumber), attemptNumber === 1 ? Number.NaN : 300),
    });
    const { callback, started } = attempts(time, [5_000]);
    const result = pipeline.execute(callback);
    await time.advanceAsync(1_999);
    expect(started).toEqual([0]);
    await time.advanceAsync(1);
    expect(started).toEqual([0, 1]);
    await time.advanceAsync(300);
    expect(started).toEqual([0, 1, 2]);
    expect(asked).toEqual([1, 2]);
    await time.advanceAsync(5_000);
    await expect(result).resolves.toBe('attempt 0');
  });

  it('waits for an asynchronous delay generator', async () => {
    const { time, pipeline } = setup({ delayGenerator: async () => 50 });
    const { callback, started } = attempts(time, [1_000, 10]);
    const result = pipeline.execute(callback);
    await time.advanceAsync(49);
    expect(started).toEqual([0]);
    await time.advanceAsync(11);
    await expect(result).resolves.toBe('attempt 1');
  });
});

describe('how many attempts hedging starts', () => {
  it('starts exactly maxHedgedAttempts hedges, and no timer once they all run', async () => {
    const { time, pipeline } = setup({ delay: 100, maxHedgedAttempts: 3 });
    const { callback, started } = attempts(time, [1_000]);
    const result = pipeline.execute(callback);
    await time.advanceAsync(300);
    expect(started).toEqual([0, 1, 2, 3]);
    expect(time.pendingDelays).toEqual([700, 800, 900, 1_000]); // the attempts only
    await time.advanceAsync(700);
    await expect(result).resolves.toBe('attempt 0');
  });

  it('in parallel mode starts every attempt at once, and no more when they fail', async () => {
    const { time, pipeline } = setup({ delay: 0, maxHedgedAttempts: 2 });
    const { callback, started } = attempts(time, [30, 10, 20], () => true);
    const result = pipeline.execute(callback);
    result.catch(() => undefined);
    await time.advanceAsync(0);
    expect(started).toEqual([0, 1, 2]);
    await time.advanceAsync(30);
    await expect(result).rejects.toThrow('attempt 0 failed');
    expect(started).toEqual([0, 1, 2]);
  });

  it('in fallback mode returns the primary failure once every attempt failed', async () => {
    const { time, pipeline } = setup({ delay: -1, maxHedgedAttempts: 2 });
    const { callback, started } = attempts(time, [10], () => true);
    const result = pipeline.execute(callback);
    result.catch(() => undefined);
    await time.advanceAsync(30);
    await expect(result).rejects.toThrow('attempt 0 failed');
    expect(started).toEqual([0, 1, 2]);
  });

  it('accepts a success that arrives after a failure, and aborts the attempts still running', async () => {
    const { time, pipeline } = setup({ delay: 0, maxHedgedAttempts: 2 });
    const { callback, reasons } = attempts(time, [100, 10, 20], (n) => n === 1);
    const result = pipeline.execute(callback);
    await time.advanceAsync(20);
    await expect(result).resolves.toBe('attempt 2');
    expect(reasons).toHaveLength(1);
    expect(reasons[0]).toBeInstanceOf(DOMException);
    expect(reasons[0]).toMatchObject({ name: 'AbortError', message: 'Another hedged attempt was accepted.' });
  });

  it('stops hedging when the caller cancels during the delay', async () => {
    const { time, pipeline, events } = setup({ delay: 100, maxHedgedAttempts: 3 });
    const controller = new AbortController();
    const { callback, started } = attempts(time, [1_000]);
    const result = pipeline.execute(callback, { signal: controller.signal });
    result.catch(() => undefined);
    await time.advanceAsync(50);
    controller.abort(new Error('caller left'));
    await expect(result).rejects.toThrow('caller left');
    expect(started).toEqual([0]);
    expect(events.filter((e) => e.eventName === 'OnHedging')).toEqual([]);
    expect(time.pendingTimerCount).toBe(0);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('stops the hedge timer as soon as the caller cancels, even while an attempt ignores its signal', async () => {
    const { time, pipeline } = setup({ delay: 100, maxHedgedAttempts: 2 });
    const controller = new AbortController();
    const result = pipeline.execute(() => time.delay(1_000).then(() => 'deaf'), { signal: controller.signal });
    await time.advanceAsync(50);
    expect(time.pendingDelays).toEqual([50, 950]);
    controller.abort(new Error('caller left'));
    await time.advanceAsync(0);
    expect(time.pendingDelays).toEqual([950]);
    await time.advanceAsync(950);
    await expect(result).resolves.toBe('deaf');
  });

  it('returns an attempt that settled while the delay generator was still deciding', async () => {
    const { time, pipeline } = setup({
      delayGenerator: async () => {
        await time.delay(50);
        return 1_000;
      },
    });
    const { callback, started } = attempts(time, [10]);
    const result = pipeline.execute(callback);
    let settledAt: number | undefined;
    void result.then(() => (settledAt = time.now()));
    await time.advanceAsync(50);
    await time.advanceAsync(0);
    expect(settledAt).toBe(50);
    await expect(result).resolves.toBe('attempt 0');
    expect(started).toEqual([0]);
    expect(time.pendingTimerCount).toBe(0);
  });

  it('accepts an abort error an attempt raised on its own: it is not hedged', async () => {
    const { time, pipeline } = setup({ delay: -1 });
    const started: number[] = [];
    const result = pipeline.execute((ctx) => {
      started.push(ctx.attemptNumber);
      return Promise.reject(new DOMException('gave up', 'AbortError'));
    });
    result.catch(() => undefined);
    await time.advanceAsync(0);
    await expect(result).rejects.toMatchObject({ name: 'AbortError', message: 'gave up' });
    expect(started).toEqual([0]);
  });

  it('clears no timer it never started', async () => {
    const { time, pipeline } = setup({ delay: -1 });
    const clear = jest.spyOn(time, 'clearTimeout');
    await expect(pipeline.execute(() => Promise.resolve('at once'))).resolves.toBe('at once');
    expect(clear).not.toHaveBeenCalled();
  });

  it('removes its listener from the caller signal when it returns normally', async () => {
    const { time, pipeline } = setup({ delay: 10 });
    const controller = new AbortController();
    const { callback } = attempts(time, [100, 5]);
    const result = pipeline.execute(callback, { signal: controller.signal });
    await time.advanceAsync(15);
    await expect(result).resolves.toBe('attempt 1');
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('does not hedge a failure that the caller caused by cancelling', async () => {
    const { time, pipeline } = setup({ delay: -1, maxHedgedAttempts: 2 });
    const controller = new AbortController();
    const started: number[] = [];
    const result = pipeline.execute(
      (ctx) => {
        started.push(ctx.attemptNumber);
        return new Promise<string>((_, reject) =>
          ctx.signal.addEventListener('abort', () => reject(new Error('cleanup failed'))),
        );
      },
      { signal: controller.signal },
    );
    result.catch(() => undefined);
    await time.advanceAsync(0);
    controller.abort(new Error('stop'));
    await expect(result).rejects.toThrow('cleanup failed');
    expect(started).toEqual([0]);
  });
});

describe('hedging callbacks and telemetry', () => {
  it('reports each attempt with its outcome, duration and whether it was handled', async () => {
    const { time, pipeline, events } = setup({ delay: 100, name: 'h' });
    const { callback } = attempts(time, [1_000, 30], () => false);
    const result = pipeline.execute(callback);
    await time.advanceAsync(130);
    await result;
    expect(events.map((e) => [e.eventName, e.severity, e.arguments])).toEqual([
      ['OnHedging', 'warning', { attemptNumber: 1 }],
      [
        'ExecutionAttempt',
        'information',
        { outcome: { ok: true, value: 'attempt 1' }, attemptNumber: 1, duration: 30, handled: false },
      ],
    ]);
    expect(events.every((e) => e.source.strategyName === 'h' && e.source.strategyType === 'hedging')).toBe(true);
  });

  it('reports a failed attempt as handled, with a warning', async () => {
    const { time, pipeline, events } = setup({ delay: 1_000 });
    const { callback } = attempts(time, [10, 20], (n) => n === 0);
    const result = pipeline.execute(callback);
    await time.advanceAsync(30);
    await expect(result).resolves.toBe('attempt 1');
    expect(events.filter((e) => e.eventName === 'ExecutionAttempt').map((e) => [e.severity, e.arguments])).toEqual([
      ['warning', expect.objectContaining({ attemptNumber: 0, duration: 10, handled: true })],
      ['information', expect.objectContaining({ attemptNumber: 1, duration: 20, handled: false })],
    ]);
  });

  it('hands shouldHandle each outcome with the attempt context, and waits for an asynchronous verdict', async () => {
    const seen: [boolean, number][] = [];
    const { time, pipeline } = setup({
      delay: -1,
      shouldHandle: async ({ outcome, context }) => {
        seen.push([outcome.ok, context.attemptNumber]);
        await Promise.resolve();
        return outcome.ok && outcome.value === 'attempt 0'; // the primary's answer is not good enough
      },
    });
    const { callback } = attempts(time, [10]);
    const result = pipeline.execute(callback);
    await time.advanceAsync(20);
    await expect(result).resolves.toBe('attempt 1');
    expect(seen).toEqual([
      [true, 0],
      [true, 1],
    ]);
  });

  it('waits for onHedging before going on, and hands it both contexts', async () => {
    const gate = deferred<void>();
    const seen: unknown[] = [];
    const context = new ResilienceContext();
    const { time, pipeline } = setup({
      delay: 10,
      maxHedgedAttempts: 2,
      onHedging: async ({ primaryContext, actionContext, attemptNumber }) => {
        seen.push([primaryContext === context, actionContext !== context, actionContext.attemptNumber, attemptNumber]);
        await gate.promise;
      },
    });
    const { callback, started } = attempts(time, [1_000]);
    const result = pipeline.execute(callback, context);
    await time.advanceAsync(30);
    expect(started).toEqual([0, 1]); // the second hedge waits for onHedging
    gate.resolve();
    await time.advanceAsync(0);
    await time.advanceAsync(10);
    expect(started).toEqual([0, 1, 2]);
    expect(seen).toEqual([
      [true, true, 1, 1],
      [true, true, 2, 2],
    ]);
    await time.advanceAsync(1_000);
    await result;
  });

  it('runs without listeners', async () => {
    const { time, pipeline } = setup({ delay: 10 }, false);
    const { callback } = attempts(time, [100, 5]);
    const result = pipeline.execute(callback);
    await time.advanceAsync(15);
    await expect(result).resolves.toBe('attempt 1');
  });
});

describe('the action generator', () => {
  it('is asked for hedges only, with both contexts and the original callback', async () => {
    const seen: unknown[] = [];
    const context = new ResilienceContext();
    const { time, pipeline } = setup({
      delay: 10,
      actionGenerator: ({ primaryContext, actionContext, attemptNumber, callback }) => {
        seen.push([primaryContext === context, actionContext.attemptNumber, attemptNumber]);
        return (ctx) => callback(ctx).then((v) => `generated ${v}`);
      },
    });
    const { callback } = attempts(time, [100, 5]);
    const result = pipeline.execute(callback, context);
    await time.advanceAsync(15);
    await expect(result).resolves.toBe('generated attempt 1');
    expect(seen).toEqual([[true, 1, 1]]);
  });

  it('asks no more once the generator declined', async () => {
    const asked: number[] = [];
    const { time, pipeline } = setup({
      delay: 10,
      maxHedgedAttempts: 5,
      actionGenerator: ({ attemptNumber }) => (asked.push(attemptNumber), undefined),
    });
    const { callback } = attempts(time, [200]);
    const result = pipeline.execute(callback);
    await time.advanceAsync(200);
    await expect(result).resolves.toBe('attempt 0');
    expect(asked).toEqual([1]);
  });

  it('turns an action that throws at once into a failed attempt', async () => {
    const { time, pipeline } = setup({
      delay: 10,
      actionGenerator: () => () => {
        throw new Error('threw at once');
      },
    });
    const { callback } = attempts(time, [100]);
    const result = pipeline.execute(callback);
    await time.advanceAsync(100);
    await expect(result).resolves.toBe('attempt 0');
  });

  it('accepts a plain value from a generated action', async () => {
    const { time, pipeline } = setup({ delay: 10, actionGenerator: () => () => 'plain' });
    const { callback } = attempts(time, [100]);
    const result = pipeline.execute(callback);
    await time.advanceAsync(10);
    await expect(result).resolves.toBe('plain');
  });
});

describe('context properties', () => {
  it('leaves the caller context alone when the accepted attempt set no properties', async () => {
    const Tenant = new ResiliencePropertyKey<string>('tenant');
    const context = new ResilienceContext();
    context.properties.set(Tenant, 'acme');
    const { time, pipeline } = setup({ delay: 10 });
    const result = pipeline.execute((ctx) => {
      if (ctx.attemptNumber === 0) ctx.properties.set(Tenant, 'changed by the loser');
      return time.delay(ctx.attemptNumber === 0 ? 100 : 1, ctx.signal).then(() => 'ok');
    }, context);
    await time.advanceAsync(11);
    await result;
    expect(context.properties.get(Tenant)).toBe('acme');
  });
});

describe('hedging options', () => {
  it('checks every option', () => {
    expect(
      strategyProblems('hedging', (b) =>
        b.addHedging({
          name: 1,
          maxHedgedAttempts: 0,
          delay: 2 ** 31,
          delayGenerator: 1,
          actionGenerator: 2,
          shouldHandle: 3,
          onHedging: 4,
          other: true,
        } as never),
      ),
    ).toEqual([
      { path: 'other', rule: 'is not a known option' },
      { path: 'name', rule: 'must be a non-empty string' },
      { path: 'maxHedgedAttempts', rule: 'must be an integer >= 1 and <= 10' },
      { path: 'delay', rule: 'must be a number <= 2147483647' },
      { path: 'delayGenerator', rule: 'must be a function' },
      { path: 'actionGenerator', rule: 'must be a function' },
      { path: 'shouldHandle', rule: 'must be a function' },
      { path: 'onHedging', rule: 'must be a function' },
    ]);
    expect(strategyProblems('hedging', (b) => b.addHedging({ maxHedgedAttempts: 1.5 }))).toEqual([
      { path: 'maxHedgedAttempts', rule: 'must be an integer >= 1 and <= 10' },
    ]);
    expect(strategyProblems('hedging', (b) => b.addHedging({ maxHedgedAttempts: 10, delay: 2 ** 31 - 1 }))).toEqual([]);
    expect(strategyProblems('hedging', (b) => b.addHedging({ maxHedgedAttempts: 1, delay: -(2 ** 40) }))).toEqual([]);
  });
});
