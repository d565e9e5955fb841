import { TimeProvider, type TimerHandle } from '../core/time/time.provider.js';

interface FakeTimer {
  readonly id: number;
  readonly due: number;
  readonly callback: () => void;
}

/**
 * A clock that only moves when told to. Timers run in due order (ties in creation order) when time is
 * advanced past them. `advanceAsync` lets promise continuations run between timers, so code that awaits a
 * delay and then starts another one behaves as it would in real time.
 *
 * ```ts
 * const time = new FakeTimeProvider();
 * const pipeline = new ResiliencePipelineBuilder({ timeProvider: time }).addRetry({ delay: 1_000 }).build();
 * const result = pipeline.execute(flaky);
 * await time.advanceAsync(3_000);
 * ```
 *
 * @publicApi
 */
export class FakeTimeProvider extends TimeProvider {
  private current: number;
  private nextId = 1;
  private readonly timers = new Map<number, FakeTimer>();

  constructor(startTime = 0) {
    super();
    this.current = startTime;
  }

  now(): number {
    return this.current;
  }

  setTimeout(callback: () => void, delay: number): TimerHandle {
    const id = this.nextId++;
    this.timers.set(id, { id, due: this.current + Math.max(0, delay), callback });
    return id;
  }

  clearTimeout(handle: TimerHandle): void {
    this.timers.delete(handle as number);
  }

  /** Timers started and not yet run or cleared. */
  get pendingTimerCount(): number {
    return this.timers.size;
  }

  /** The delays of pending timers, relative to now, in due order. */
  get pendingDelays(): number[] {
    return [...this.timers.values()].sort(byDue).map((t) => t.due - this.current);
  }

  /** Moves time forward by `ms`, running due timers synchronously. */
  advance(ms: number): void {
    const target = this.current + ms;
    for (let timer = this.nextDue(target); timer; timer = this.nextDue(target)) {
      this.current = timer.due;
      this.timers.delete(timer.id);
      timer.callback();
    }
    this.current = target;
  }

  /**
   * Moves time forward by `ms`, letting pending promise continuations run before and after each timer.
   * Timers that those continuations start within the window also run.
   */
  async advanceAsync(ms: number): Promise<void> {
    const target = this.current + ms;
    await flushPromises();
    for (let timer = this.nextDue(target); timer; timer = this.nextDue(target)) {
      this.current = timer.due;
      this.timers.delete(timer.id);
      timer.callback();
      await flushPromises();
    }
    this.current = target;
    await flushPromises();
  }

  /** Runs every timer, including those started meanwhile, until none is left (at most `limit`). */
  async runAllAsync(limit = 10_000): Promise<void> {
    await flushPromises();
    for (let i = 0; i < limit; i++) {
      const timer = this.nextDue(Infinity);
      if (!timer) return;
      this.current = Math.max(this.current, timer.due);
      this.timers.delete(timer.id);
      timer.callback();
      await flushPromises();
    }
    throw new Error(`FakeTimeProvider.runAllAsync: more than ${limit} timers ran; is a timer rescheduling itself?`);
  }

  private nextDue(target: number): FakeTimer | undefined {
    let best: FakeTimer | undefined;
    for (const timer of this.timers.values()) {
      if (timer.due <= target && (!best || byDue(timer, best) < 0)) best = timer;
    }
    return best;
  }
}

function byDue(a: FakeTimer, b: FakeTimer): number {
  return a.due - b.due || a.id - b.id;
}

/** Resolves once every promise continuation queued so far (and those they queue) has run. @publicApi */
export function flushPromises(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
