import { describe, expect, it } from '@jest/globals';
import { getEventListeners } from 'node:events';
import { ResiliencePipelineBuilder, TimeoutRejectedError } from '../../../src/core.entry.js';
import { FakeTimeProvider } from '../../../src/testing/index.js';

// Every assertion is exact (no timer, no listener left), so one leaked item per execution shows at any
// count; 500 runs many calls at once (overlapping timers and listeners) without depending on CPU speed.
const EXECUTIONS = 500;

describe('resource hygiene', () => {
  it(`leaves no timer and no abort listener behind after ${EXECUTIONS} timed-out executions`, async () => {
    const time = new FakeTimeProvider();
    const caller = new AbortController();
    const pipeline = new ResiliencePipelineBuilder({ timeProvider: time })
      .addRetry({ maxRetryAttempts: 1, delay: 5 })
      .addTimeout(10)
      .build();
    const results = Array.from({ length: EXECUTIONS }, () =>
      pipeline
        .execute(({ signal }) => time.delay(1_000, signal), { signal: caller.signal })
        .then(
          () => 'resolved',
          (e: unknown) => (e instanceof TimeoutRejectedError ? 'timeout' : String(e)),
        ),
    );
    await time.advanceAsync(100);
    const outcomes = await Promise.all(results);
    expect(new Set(outcomes)).toEqual(new Set(['timeout']));
    expect(time.pendingTimerCount).toBe(0);
    expect(getEventListeners(caller.signal, 'abort')).toHaveLength(0);
  });

  it(`leaves no timer and no abort listener behind after ${EXECUTIONS} cancelled executions`, async () => {
    const time = new FakeTimeProvider();
    const pipeline = new ResiliencePipelineBuilder({ timeProvider: time })
      .addRetry({ delay: 1_000 })
      .addTimeout(60_000)
      .build();
    const signals: AbortSignal[] = [];
    const runs = Array.from({ length: EXECUTIONS }, (_, i) => {
      const controller = new AbortController();
      signals.push(controller.signal);
      const run = pipeline.execute(
        ({ signal }) => time.delay(i % 2 === 0 ? 50 : 5_000, signal).then(() => Promise.reject(new Error('fail'))),
        {
          signal: controller.signal,
        },
      );
      return {
        controller,
        run: run.then(
          () => 'resolved',
          (e: unknown) => (e as Error).message,
        ),
      };
    });
    // Half are in their retry sleep, half still in the call, when every caller aborts.
    await time.advanceAsync(100);
    for (const { controller } of runs) controller.abort(new Error('cancelled'));
    const outcomes = await Promise.all(runs.map((r) => r.run));
    expect(new Set(outcomes)).toEqual(new Set(['cancelled']));
    expect(time.pendingTimerCount).toBe(0);
    expect(signals.every((s) => getEventListeners(s, 'abort').length === 0)).toBe(true);
  });
});
