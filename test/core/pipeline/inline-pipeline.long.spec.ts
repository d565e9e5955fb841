import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import {
  ResiliencePipelineBuilder,
  type ResilienceContext,
  type ResilienceStrategy,
  type StrategyNext,
  type TimeoutMode,
} from '../../../src/core.entry.js';
import { FakeTimeProvider } from '../../../src/testing/index.js';

/** Passes every call through; between two strategies it keeps them from sharing one inline run. */
const passThrough: ResilienceStrategy<unknown> = {
  execute: (next: StrategyNext<unknown>, context: ResilienceContext) => next(context),
};

type Layer =
  | { kind: 'retry'; retries: number; delay: number; results: boolean }
  | { kind: 'breaker'; threshold: number }
  | { kind: 'timeout'; timeout: number; mode: TimeoutMode; generated: boolean };

type Attempt = { kind: 'value' | 'error' | 'bad-value'; ms: number };

const layer: fc.Arbitrary<Layer> = fc.oneof(
  fc.record({
    kind: fc.constant('retry' as const),
    retries: fc.integer({ min: 0, max: 2 }),
    delay: fc.constantFrom(0, 10),
    results: fc.boolean(),
  }),
  fc.record({ kind: fc.constant('breaker' as const), threshold: fc.integer({ min: 1, max: 3 }) }),
  fc.record({
    kind: fc.constant('timeout' as const),
    timeout: fc.constantFrom(20, 45, 200),
    mode: fc.constantFrom<TimeoutMode>('cooperative', 'aggressive'),
    generated: fc.boolean(),
  }),
);

/** Runs the calls one after another through the layers and logs attempts, outcomes and breaker transitions. */
async function trace(layers: Layer[], calls: Attempt[][], separated: boolean): Promise<string[]> {
  const time = new FakeTimeProvider();
  const log: string[] = [];
  const builder = new ResiliencePipelineBuilder<string>({ timeProvider: time });
  layers.forEach((l, i) => {
    if (separated && i > 0) builder.addStrategy({ type: 'pass-through', options: {}, create: () => passThrough });
    if (l.kind === 'retry') {
      builder.addRetry({
        maxRetryAttempts: l.retries,
        delay: l.delay,
        onRetry: ({ attemptNumber }) => void log.push(`${time.now()} layer ${i} retry ${attemptNumber}`),
        ...(l.results ? { shouldHandle: ({ outcome }) => !outcome.ok || outcome.value === 'bad value' } : undefined),
      });
    } else if (l.kind === 'breaker') {
      builder.addCircuitBreaker({
        kind: 'consecutive',
        failureThreshold: l.threshold,
        breakDuration: 100,
        onStateChange: ({ from, to }) => void log.push(`${time.now()} layer ${i} ${from}→${to}`),
      });
    } else {
      builder.addTimeout({
        ...(l.generated ? { timeoutGenerator: () => l.timeout } : { timeout: l.timeout }),
        mode: l.mode,
        onTimeout: () => void log.push(`${time.now()} layer ${i} timeout`),
      });
    }
  });
  const pipeline = builder.build();
  for (const [i, attempts] of calls.entries()) {
    let n = 0;
    const run = pipeline
      .execute(async (context) => {
        const attempt = attempts[Math.min(n++, attempts.length - 1)];
        log.push(`${time.now()} call ${i} attempt ${context.attemptNumber} aborted ${context.signal.aborted}`);
        await time.delay(attempt.ms, context.signal);
        if (attempt.kind === 'error') throw new Error(`failure ${i}`);
        return attempt.kind === 'bad-value' ? 'bad value' : `value ${i}`;
      })
      .then(
        (value) => log.push(`${time.now()} call ${i} → ${value}`),
        (error: Error) => log.push(`${time.now()} call ${i} ✗ ${error.name}: ${error.message}`),
      );
    await time.advanceAsync(2_000);
    await run;
  }
  log.push(`timers left ${time.pendingTimerCount}`);
  return log;
}

describe('long chains of inline strategies (split into runs of at most four)', () => {
  it('behave exactly as the same strategies run one by one', async () => {
    const attempt = fc.record({
      kind: fc.constantFrom<Attempt['kind']>('value', 'error', 'bad-value'),
      ms: fc.constantFrom(0, 5, 30, 60),
    });
    await fc.assert(
      fc.asyncProperty(
        fc.array(layer, { minLength: 4, maxLength: 9 }),
        fc.array(fc.array(attempt, { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 4 }),
        async (layers, calls) => {
          const inline = await trace(layers, calls, false);
          const separate = await trace(layers, calls, true);
          expect(inline).toEqual(separate);
          expect(inline[inline.length - 1]).toBe('timers left 0');
        },
      ),
      { numRuns: 60 },
    );
  });

  it('five and nine fixed cooperative timeouts in a row each end the call at their own deadline', async () => {
    for (const timeouts of [
      [500, 400, 300, 200, 100],
      [900, 800, 700, 600, 500, 400, 300, 200, 100],
    ]) {
      for (let innermostFirst = timeouts.length - 1; innermostFirst >= 0; innermostFirst--) {
        const time = new FakeTimeProvider();
        const fired: number[] = [];
        const builder = new ResiliencePipelineBuilder({ timeProvider: time });
        // One of the layers is the shortest: it alone fires.
        const chosen = timeouts.map((t, i) => (i === innermostFirst ? 50 : t));
        chosen.forEach((t, i) => builder.addTimeout({ timeout: t, onTimeout: () => void fired.push(i) }));
        const pipeline = builder.build();
        const result = pipeline
          .execute(({ signal }) => time.delay(10_000, signal))
          .catch((e: { timeout?: number }) => e.timeout);
        await time.advanceAsync(1_000);
        await expect(result).resolves.toBe(50);
        expect(fired).toEqual([innermostFirst]);
        expect(time.pendingTimerCount).toBe(0);
        await expect(pipeline.execute(() => 'again')).resolves.toBe('again');
        expect(time.pendingTimerCount).toBe(0);
      }
    }
  });
});
