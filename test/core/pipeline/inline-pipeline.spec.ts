import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import {
  ResiliencePipelineBuilder,
  type ResilienceContext,
  type ResiliencePipeline,
  type ResilienceStrategy,
  type StrategyNext,
  type TimeoutMode,
} from '../../../src/core.entry.js';
import { FakeTimeProvider } from '../../../src/testing/index.js';

/** Passes every call through; placed between two strategies it keeps them from sharing one inline run. */
const passThrough: ResilienceStrategy<unknown> = {
  execute: (next: StrategyNext<unknown>, context: ResilienceContext) => next(context),
};

type Attempt = { kind: 'value' | 'error' | 'bad-value'; ms: number };

interface Shape {
  retries: number;
  retryDelay: number;
  retryResults: boolean;
  mode: TimeoutMode;
  timeoutGenerated: boolean;
}

function build(time: FakeTimeProvider, shape: Shape, separated: boolean, log: string[]): ResiliencePipeline<string> {
  const builder = new ResiliencePipelineBuilder<string>({ timeProvider: time });
  const gap = (): void => {
    if (separated) builder.addStrategy({ type: 'pass-through', options: {}, create: () => passThrough });
  };
  builder.addRetry({
    maxRetryAttempts: shape.retries,
    delay: shape.retryDelay,
    ...(shape.retryResults
      ? { shouldHandle: ({ outcome }) => !outcome.ok || outcome.value === 'bad value' }
      : undefined),
  });
  gap();
  builder.addCircuitBreaker({
    kind: 'consecutive',
    failureThreshold: 3,
    breakDuration: 100,
    onStateChange: ({ from, to }) => void log.push(`${time.now()} ${from}→${to}`),
  });
  gap();
  builder.addTimeout(
    shape.timeoutGenerated ? { timeoutGenerator: () => 40, mode: shape.mode } : { timeout: 40, mode: shape.mode },
  );
  return builder.build();
}

/** Runs the calls one after another and logs every attempt, outcome and breaker transition with its time. */
async function trace(shape: Shape, calls: Attempt[][], separated: boolean): Promise<string[]> {
  const time = new FakeTimeProvider();
  const log: string[] = [];
  const pipeline = build(time, shape, separated, log);
  for (const [i, attempts] of calls.entries()) {
    let n = 0;
    const run = pipeline
      .execute(async (context) => {
        const attempt = attempts[Math.min(n++, attempts.length - 1)];
        log.push(`${time.now()} call ${i} attempt ${context.attemptNumber} signal ${context.signal.aborted}`);
        await time.delay(attempt.ms, context.signal);
        if (attempt.kind === 'error') throw new Error(`failure ${i}`);
        return attempt.kind === 'bad-value' ? 'bad value' : `value ${i}`;
      })
      .then(
        (value) => log.push(`${time.now()} call ${i} → ${value}`),
        (error: Error) => log.push(`${time.now()} call ${i} ✗ ${error.name}: ${error.message}`),
      );
    await time.advanceAsync(1_000);
    await run;
  }
  log.push(`timers left ${time.pendingTimerCount}`);
  return log;
}

describe('inline runs of strategies', () => {
  it('behave exactly as the same strategies run one by one, for any shape and any sequence of outcomes', async () => {
    const attempt = fc.record({
      kind: fc.constantFrom<Attempt['kind']>('value', 'error', 'bad-value'),
      ms: fc.constantFrom(0, 5, 60),
    });
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          retries: fc.integer({ min: 0, max: 3 }),
          retryDelay: fc.constantFrom(0, 10),
          retryResults: fc.boolean(),
          mode: fc.constantFrom<TimeoutMode>('cooperative', 'aggressive'),
          timeoutGenerated: fc.boolean(),
        }),
        fc.array(fc.array(attempt, { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 6 }),
        async (shape, calls) => {
          const inline = await trace(shape, calls, false);
          const separate = await trace(shape, calls, true);
          expect(inline).toEqual(separate);
          expect(inline[inline.length - 1]).toBe('timers left 0');
        },
      ),
      { numRuns: 120 },
    );
  });

  it('restores the caller context after every attempt of an inline run', async () => {
    const time = new FakeTimeProvider();
    const pipeline = new ResiliencePipelineBuilder({ timeProvider: time })
      .addRetry({ maxRetryAttempts: 2, delay: 0 })
      .addCircuitBreaker()
      .addTimeout(1_000)
      .build();
    const signals: AbortSignal[] = [];
    let calls = 0;
    const caller = new AbortController();
    await expect(
      pipeline.execute(
        ({ signal }) => {
          signals.push(signal);
          if (++calls < 3) throw new Error('again');
          return 'done';
        },
        { signal: caller.signal },
      ),
    ).resolves.toBe('done');
    // Each attempt ran under its own timeout scope, none of them aborted, and nothing is left armed.
    expect(new Set(signals).size).toBe(3);
    expect(signals.some((s) => s.aborted)).toBe(false);
    expect(time.pendingTimerCount).toBe(0);
    caller.abort(new Error('late'));
    expect(signals.every((s) => !s.aborted)).toBe(true);
  });

  it('a strategy of its own between built-in ones runs in order, with the inline runs on either side', async () => {
    const order: string[] = [];
    const named = (name: string): ResilienceStrategy<unknown> => ({
      execute: (next, context) => {
        order.push(`${name} in`);
        return next(context).then((value) => {
          order.push(`${name} out`);
          return value;
        });
      },
    });
    const pipeline = new ResiliencePipelineBuilder()
      .addRetry({ delay: 0, onRetry: () => void order.push('retry') })
      .addCircuitBreaker()
      .addStrategy({ type: 'custom', options: {}, create: () => named('custom') })
      .addCircuitBreaker({ name: 'inner' })
      .addTimeout(1_000)
      .build();
    let calls = 0;
    await expect(
      pipeline.execute(() => {
        order.push('callback');
        if (++calls === 1) throw new Error('once');
        return 'ok';
      }),
    ).resolves.toBe('ok');
    expect(order).toEqual(['custom in', 'callback', 'retry', 'custom in', 'callback', 'custom out']);
  });
});
