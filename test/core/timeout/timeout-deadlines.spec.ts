import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { ResiliencePipelineBuilder, TimeoutRejectedError, type TimeoutMode } from '../../../src/core.entry.js';
import { FakeTimeProvider } from '../../../src/testing/index.js';

const TIMEOUT = 100;

interface Settled {
  readonly start: number;
  readonly at: number;
  readonly outcome: string;
}

/** Runs a call that takes `ms` (observing the signal unless `stubborn`) and records when and how it ended. */
function timedCall(
  time: FakeTimeProvider,
  run: (callback: (ctx: { signal: AbortSignal }) => Promise<string>, signal?: AbortSignal) => Promise<string>,
  ms: number,
  options: { stubborn?: boolean; signal?: AbortSignal } = {},
): Promise<Settled> {
  const start = time.now();
  return run(
    ({ signal }) => time.delay(ms, options.stubborn ? undefined : signal).then(() => `value ${ms}`),
    options.signal,
  ).then(
    (value) => ({ start, at: time.now(), outcome: value }),
    (error: unknown) => ({
      start,
      at: time.now(),
      outcome: error instanceof TimeoutRejectedError ? 'timeout' : `error ${String((error as Error).message)}`,
    }),
  );
}

function pipelineOn(time: FakeTimeProvider, mode: TimeoutMode) {
  const pipeline = new ResiliencePipelineBuilder({ timeProvider: time }).addTimeout({ timeout: TIMEOUT, mode }).build();
  return (callback: (ctx: { signal: AbortSignal }) => Promise<string>, signal?: AbortSignal) =>
    pipeline.execute(callback, { signal });
}

/**
 * The timers started through the global `setTimeout` while `run` goes on (the system clock's) that are
 * still pending once it has ended: neither fired nor cleared. Timers of the rest of the process do not
 * count, however busy the machine.
 */
async function timersLeftBy(run: () => Promise<void>): Promise<number> {
  const pending = new Set<ReturnType<typeof setTimeout>>();
  const [realSet, realClear] = [globalThis.setTimeout, globalThis.clearTimeout];
  globalThis.setTimeout = ((callback: (...args: unknown[]) => void, delay?: number, ...args: unknown[]) => {
    const handle = realSet(() => {
      pending.delete(handle);
      callback(...args);
    }, delay);
    pending.add(handle);
    return handle;
  }) as typeof setTimeout;
  globalThis.clearTimeout = ((handle: ReturnType<typeof setTimeout> | undefined) => {
    if (handle !== undefined) pending.delete(handle);
    realClear(handle);
  }) as typeof clearTimeout;
  try {
    await run();
  } finally {
    globalThis.setTimeout = realSet;
    globalThis.clearTimeout = realClear;
  }
  return pending.size;
}

describe.each<TimeoutMode>(['cooperative', 'aggressive'])('timeout deadlines (%s)', (mode) => {
  it('serves every running call of a fixed timeout with one timer', async () => {
    const time = new FakeTimeProvider();
    const run = pipelineOn(time, mode);
    // Callbacks that never start a timer of their own, so every pending timer is the strategy's.
    const gates: (() => void)[] = [];
    const calls = Array.from({ length: 50 }, () =>
      run(() => new Promise<string>((resolve) => gates.push(() => resolve('done')))),
    );
    expect(time.pendingTimerCount).toBe(1);
    for (const open of gates) open();
    await expect(Promise.all(calls)).resolves.toHaveLength(50);
    expect(time.pendingTimerCount).toBe(0);
  });

  it('leaves no timer once the last call settled, and arms one again for the next call', async () => {
    const time = new FakeTimeProvider();
    const run = pipelineOn(time, mode);
    await expect(run(() => Promise.resolve('first'))).resolves.toBe('first');
    expect(time.pendingTimerCount).toBe(0);
    const second = timedCall(time, run, 500);
    expect(time.pendingDelays).toContain(TIMEOUT);
    await time.advanceAsync(500);
    await expect(second).resolves.toEqual({ start: 0, at: TIMEOUT, outcome: 'timeout' });
    expect(time.pendingTimerCount).toBe(0);
  });

  it('times out each call at its own deadline when earlier calls settle first', async () => {
    const time = new FakeTimeProvider();
    const run = pipelineOn(time, mode);
    const first = timedCall(time, run, 50);
    await time.advanceAsync(10);
    const second = timedCall(time, run, 1_000);
    await time.advanceAsync(10);
    const third = timedCall(time, run, 1_000);
    await time.advanceAsync(1_000);
    await expect(first).resolves.toEqual({ start: 0, at: 50, outcome: 'value 50' });
    await expect(second).resolves.toEqual({ start: 10, at: 110, outcome: 'timeout' });
    await expect(third).resolves.toEqual({ start: 20, at: 120, outcome: 'timeout' });
    expect(time.pendingTimerCount).toBe(0);
  });

  it('a cancelled call leaves the queue at once and does not move the deadlines of the others', async () => {
    const time = new FakeTimeProvider();
    const run = pipelineOn(time, mode);
    const caller = new AbortController();
    const cancelled = timedCall(time, run, 1_000, { signal: caller.signal });
    await time.advanceAsync(30);
    const other = timedCall(time, run, 1_000);
    await time.advanceAsync(10);
    caller.abort(new Error('caller gave up'));
    await expect(cancelled).resolves.toEqual({ start: 0, at: 40, outcome: 'error caller gave up' });
    await time.advanceAsync(1_000);
    await expect(other).resolves.toEqual({ start: 30, at: 130, outcome: 'timeout' });
    expect(time.pendingTimerCount).toBe(0);
  });

  it('a call started from an abort listener at the deadline gets a deadline of its own', async () => {
    const time = new FakeTimeProvider();
    const run = pipelineOn(time, mode);
    let started: Promise<Settled> | undefined;
    const first = run(({ signal }) => {
      signal.addEventListener('abort', () => {
        started = timedCall(time, run, 1_000);
      });
      return time.delay(1_000, signal).then(() => 'late');
    }).catch((e: unknown) => (e instanceof TimeoutRejectedError ? 'timeout' : 'other'));
    await time.advanceAsync(TIMEOUT);
    await expect(first).resolves.toBe('timeout');
    await time.advanceAsync(2_000);
    await expect(started).resolves.toEqual({ start: TIMEOUT, at: 2 * TIMEOUT, outcome: 'timeout' });
    expect(time.pendingTimerCount).toBe(0);
  });

  it('ends every call as its own timer would, for any interleaving of starts, settles and cancellations', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            gap: fc.integer({ min: 0, max: 60 }),
            duration: fc.integer({ min: 1, max: 250 }).filter((d) => d !== TIMEOUT),
            abortAfter: fc.option(
              fc.integer({ min: 1, max: 250 }).filter((a) => a !== TIMEOUT),
              { nil: undefined },
            ),
            stubborn: fc.boolean(),
          }),
          { minLength: 1, maxLength: 25 },
        ),
        async (calls) => {
          const time = new FakeTimeProvider();
          const run = pipelineOn(time, mode);
          const results: Promise<Settled>[] = [];
          for (const { gap, duration, abortAfter, stubborn } of calls) {
            await time.advanceAsync(gap);
            const caller = new AbortController();
            if (abortAfter !== undefined) {
              // The caller's own timer, on the same fake clock.
              time.setTimeout(() => caller.abort(new Error('cancelled')), abortAfter);
            }
            results.push(timedCall(time, run, duration, { signal: caller.signal, stubborn }));
          }
          await time.advanceAsync(1_000);
          const settled = await Promise.all(results);
          settled.forEach((result, i) => {
            const { duration, abortAfter, stubborn } = calls[i];
            // A callback that ignores its signal keeps its result under a cooperative timeout, and is not
            // ended by the caller's abort under an aggressive one.
            const ends = [
              { after: duration, outcome: `value ${duration}` },
              ...(stubborn && mode === 'cooperative' ? [] : [{ after: TIMEOUT, outcome: 'timeout' }]),
              ...(abortAfter === undefined || stubborn ? [] : [{ after: abortAfter, outcome: 'error cancelled' }]),
            ].sort((a, b) => a.after - b.after);
            // Ties between the callback and the caller's abort may go either way: accept both.
            const first = ends.filter((e) => e.after === ends[0].after).map((e) => e.outcome);
            expect(result.at).toBe(result.start + ends[0].after);
            expect(first).toContain(result.outcome);
          });
          expect(time.pendingTimerCount).toBe(0);
        },
      ),
      { numRuns: 150 },
    );
  });
});

describe('timeout deadlines on the system clock', () => {
  it('keeps no timer once the last call settled and the event loop turned', async () => {
    const left = await timersLeftBy(async () => {
      const pipeline = new ResiliencePipelineBuilder().addTimeout({ timeout: 60_000 }).build();
      for (let i = 0; i < 100; i++) await pipeline.execute(() => Promise.resolve(i));
      await Promise.all(Array.from({ length: 100 }, (_, i) => pipeline.execute(() => Promise.resolve(i))));
      await new Promise((resolve) => setImmediate(resolve));
    });
    expect(left).toBe(0);
  });

  it('still times out a call whose predecessors settled (the shared timer is re-armed)', async () => {
    const left = await timersLeftBy(async () => {
      const pipeline = new ResiliencePipelineBuilder().addTimeout({ timeout: 20, mode: 'aggressive' }).build();
      await pipeline.execute(() => Promise.resolve('quick'));
      const never = new Promise<string>(() => undefined);
      await expect(pipeline.execute(() => never)).rejects.toBeInstanceOf(TimeoutRejectedError);
      await new Promise((resolve) => setImmediate(resolve));
    });
    expect(left).toBe(0);
  });
});

describe('timeout generator', () => {
  it('gives calls of different durations their own deadlines, in any order', async () => {
    const time = new FakeTimeProvider();
    const durations = [300, 100, 200];
    let next = 0;
    const pipeline = new ResiliencePipelineBuilder({ timeProvider: time })
      .addTimeout({ timeoutGenerator: () => durations[next++] })
      .build();
    const run = (cb: (ctx: { signal: AbortSignal }) => Promise<string>) => pipeline.execute(cb);
    const calls = durations.map(() => timedCall(time, run, 1_000));
    await time.advanceAsync(1_000);
    await expect(Promise.all(calls)).resolves.toEqual([
      { start: 0, at: 300, outcome: 'timeout' },
      { start: 0, at: 100, outcome: 'timeout' },
      { start: 0, at: 200, outcome: 'timeout' },
    ]);
    expect(time.pendingTimerCount).toBe(0);
  });
});

describe('aggressive timeout racing a late value', () => {
  it.each([
    ['alone', false],
    ['inside retry → circuit breaker', true],
  ])('%s: a value that arrives while onTimeout runs is discarded', async (_, composed) => {
    const time = new FakeTimeProvider();
    let finishTimeoutHandler: () => void = () => undefined;
    const builder = new ResiliencePipelineBuilder({ timeProvider: time });
    if (composed) builder.addRetry({ maxRetryAttempts: 0 }).addCircuitBreaker();
    const pipeline = builder
      .addTimeout({
        timeout: TIMEOUT,
        mode: 'aggressive',
        onTimeout: () => new Promise<void>((resolve) => (finishTimeoutHandler = resolve)),
      })
      .build();
    let deliver: (value: string) => void = () => undefined;
    const result = pipeline.execute(() => new Promise<string>((resolve) => (deliver = resolve)));
    const settled = result.then(
      (value) => `value ${value}`,
      (error: unknown) => (error instanceof TimeoutRejectedError ? 'timeout' : 'other'),
    );
    await time.advanceAsync(TIMEOUT);
    deliver('late');
    await time.advanceAsync(1);
    finishTimeoutHandler();
    await expect(settled).resolves.toBe('timeout');
    expect(time.pendingTimerCount).toBe(0);
  });
});
