import { describe, expect, it } from '@jest/globals';
import {
  ResilienceContext,
  ResiliencePipelineBuilder,
  SystemTimeProvider,
  TimeoutRejectedError,
  type TimerHandle,
  type TimeoutMode,
} from '../../../src/core.entry.js';
import { FakeTimeProvider } from '../../../src/testing/index.js';
import { microtaskTurns } from '../../utils/microtask-turns.js';

/** A fake clock that counts the timers it is asked for and flags a clear of a handle it never gave out. */
class CountingClock extends FakeTimeProvider {
  sets = 0;
  readonly issued = new Set<TimerHandle>();
  readonly strayClears: TimerHandle[] = [];

  override setTimeout(callback: () => void, delay: number): TimerHandle {
    this.sets++;
    const handle = super.setTimeout(callback, delay);
    this.issued.add(handle);
    return handle;
  }

  override clearTimeout(handle: TimerHandle): void {
    if (!this.issued.has(handle)) this.strayClears.push(handle);
    super.clearTimeout(handle);
  }
}

/** The system clock, counting what the timeout asks of it. */
class CountingSystemClock extends SystemTimeProvider {
  sets = 0;
  clears = 0;
  reads = 0;
  readonly issued = new Set<TimerHandle>();
  readonly strayClears: TimerHandle[] = [];

  override now(): number {
    this.reads++;
    return super.now();
  }

  override setTimeout(callback: () => void, delay: number): TimerHandle {
    this.sets++;
    const handle = super.setTimeout(callback, delay);
    this.issued.add(handle);
    return handle;
  }

  override clearTimeout(handle: TimerHandle): void {
    this.clears++;
    if (!this.issued.has(handle)) this.strayClears.push(handle);
    super.clearTimeout(handle);
  }
}

/** A callback's wait that sets no timer of its own: it ends when its signal aborts. */
const untilAborted = (signal: AbortSignal) =>
  new Promise<never>((_, reject) => signal.addEventListener('abort', () => reject(signal.reason as Error)));

const immediates = () => process.getActiveResourcesInfo().filter((r) => r === 'Immediate').length;

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe.each<TimeoutMode>(['cooperative', 'aggressive'])('the timers of a fixed %s timeout', (mode) => {
  const build = (time: FakeTimeProvider | SystemTimeProvider, timeout = 100) =>
    new ResiliencePipelineBuilder({ timeProvider: time }).addTimeout({ timeout, mode }).build();

  it('calls started at the same instant share one timer, and time out in the order they started', async () => {
    const clock = new CountingClock();
    const pipeline = build(clock);
    const order: number[] = [];
    const calls = [0, 1, 2, 3].map((i) =>
      pipeline.execute(({ signal }) => {
        signal.addEventListener('abort', () => order.push(i));
        return untilAborted(signal);
      }),
    );
    const settled = Promise.allSettled(calls);
    expect(clock.sets).toBe(1);
    await clock.advanceAsync(100);
    await settled;
    expect(order).toEqual([0, 1, 2, 3]);
    expect(clock.strayClears).toEqual([]);
  });

  it('arms the timer again only for the next deadline still running', async () => {
    const clock = new CountingClock();
    const pipeline = build(clock);
    const ended: number[] = [];
    const start = () => pipeline.execute(({ signal }) => untilAborted(signal)).catch(() => ended.push(clock.now()));
    const calls = [start()];
    await clock.advanceAsync(10);
    calls.push(start());
    await clock.advanceAsync(10);
    calls.push(start());
    await clock.advanceAsync(1_000);
    await Promise.all(calls);
    expect(ended).toEqual([100, 110, 120]);
    // One timer for the first deadline, then one for each later deadline when the timer finds it not yet due.
    expect(clock.sets).toBe(3);
    expect(clock.pendingTimerCount).toBe(0);
    expect(clock.strayClears).toEqual([]);
  });

  it('a call started from an abort listener at the deadline arms the one timer it needs', async () => {
    const clock = new CountingClock();
    const pipeline = build(clock);
    let started: Promise<unknown> | undefined;
    const first = pipeline.execute(({ signal }) => {
      signal.addEventListener('abort', () => {
        started = pipeline.execute(({ signal: s }) => untilAborted(s)).catch((e: unknown) => e);
      });
      return untilAborted(signal);
    });
    const settled = first.catch((e: unknown) => e);
    await clock.advanceAsync(100);
    await expect(settled).resolves.toBeInstanceOf(TimeoutRejectedError);
    expect(clock.sets).toBe(2);
    await clock.advanceAsync(100);
    await expect(started).resolves.toBeInstanceOf(TimeoutRejectedError);
    expect(clock.sets).toBe(2);
    expect(clock.strayClears).toEqual([]);
  });

  it('reads the fake clock on every call: time moved between two calls of one turn counts', () => {
    const clock = new CountingClock();
    const pipeline = build(clock);
    const aborted: Record<string, number> = {};
    const start = (name: string) =>
      void pipeline
        .execute(({ signal }) => {
          signal.addEventListener('abort', () => (aborted[name] = clock.now()));
          return new Promise(() => undefined);
        })
        .catch(() => undefined);
    start('first');
    clock.advance(50);
    start('second');
    clock.advance(100);
    expect(aborted).toEqual({ first: 100, second: 150 });
  });

  it('on the system clock, back-to-back calls of one turn set one timer and read the clock once', async () => {
    const clock = new CountingSystemClock();
    const pipeline = build(clock, 60_000);
    for (let round = 1; round <= 2; round++) {
      const before = immediates();
      for (let i = 0; i < 20; i++) await pipeline.execute(() => i);
      // One end-of-turn check, however many calls the turn ran.
      expect(immediates() - before).toBe(1);
      expect(clock.sets).toBe(round);
      expect(clock.reads).toBe(round);
      // The idle timer is released at the end of the turn.
      expect(clock.clears).toBe(round - 1);
      await nextTurn();
      expect(clock.clears).toBe(round);
    }
    await nextTurn();
    expect(clock.clears).toBe(2);
    expect(clock.strayClears).toEqual([]);
  });

  it('on the system clock, a turn that ends with calls still running keeps their timer', async () => {
    const clock = new CountingSystemClock();
    const pipeline = build(clock, 60_000);
    let open: () => void = () => undefined;
    const running = pipeline.execute(() => new Promise<void>((resolve) => (open = resolve)));
    await pipeline.execute(() => 'quick');
    await nextTurn();
    expect(clock.clears).toBe(0);
    open();
    await running;
    await nextTurn();
    expect(clock.clears).toBe(1);
    expect(clock.strayClears).toEqual([]);
  });
});

describe('the timers of a generated timeout', () => {
  it('a call that settled is never timed out later, even on a clock whose clearTimeout cannot cancel', async () => {
    class LeakyClock extends FakeTimeProvider {
      override clearTimeout(): void {}
    }
    const clock = new LeakyClock();
    let timeouts = 0;
    for (const mode of ['cooperative', 'aggressive'] as const) {
      const pipeline = new ResiliencePipelineBuilder({ timeProvider: clock })
        .addTimeout({ timeoutGenerator: () => 100, mode, onTimeout: () => void timeouts++ })
        .build();
      await expect(pipeline.execute(() => 'quick')).resolves.toBe('quick');
    }
    await clock.advanceAsync(1_000);
    expect(timeouts).toBe(0);
  });

  it('sets one timer per call and clears it when the call settles', async () => {
    const clock = new CountingClock();
    const pipeline = new ResiliencePipelineBuilder({ timeProvider: clock })
      .addTimeout({ timeoutGenerator: () => 100 })
      .build();
    await Promise.all([pipeline.execute(() => 1), pipeline.execute(() => 2)]);
    expect(clock.sets).toBe(2);
    expect(clock.pendingTimerCount).toBe(0);
    const late = pipeline.execute(({ signal }) => untilAborted(signal)).catch((e: unknown) => e);
    await clock.advanceAsync(100);
    await expect(late).resolves.toBeInstanceOf(TimeoutRejectedError);
    expect(clock.pendingTimerCount).toBe(0);
    expect(clock.strayClears).toEqual([]);
  });
});

describe.each<[TimeoutMode, number]>([
  ['cooperative', 0],
  ['aggressive', 1],
])('a fixed %s timeout inside an inline run', (mode, ownHops) => {
  // A cooperative timeout adds no promise hop to the run; an aggressive one settles the call itself: one hop.
  it('releases its deadline when the first attempt returns a value, at the cost of its own hops only', async () => {
    const clock = new CountingClock();
    const pipeline = new ResiliencePipelineBuilder({ timeProvider: clock })
      .addRetry({ maxRetryAttempts: 1, delay: 0 })
      .addTimeout({ timeout: 100, mode })
      .build();
    const alone = new ResiliencePipelineBuilder({ timeProvider: clock }).addRetry().build();
    const context = new ResilienceContext();
    const outer = context.signal;
    expect(await microtaskTurns(pipeline.execute(() => 'value', context))).toBe(
      (await microtaskTurns(alone.execute(() => 'value'))) + ownHops,
    );
    await expect(pipeline.execute(() => 'value', context)).resolves.toBe('value');
    expect(clock.pendingTimerCount).toBe(0);
    // The caller's context is its own again.
    expect(context.signal).toBe(outer);
    expect(clock.strayClears).toEqual([]);
  });
});
