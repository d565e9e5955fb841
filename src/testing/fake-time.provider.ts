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
  /** A binary min-heap by (due, id); cleared timers stay in it until they reach the top. */
  private readonly heap: FakeTimer[] = [];

  constructor(startTime = 0) {
    super();
    this.current = startTime;
  }

  now(): number {
    return this.current;
  }

  /** Moves with the fake clock (`advance`, `advanceAsync`, `runAllAsync`): durations are exact, fractions included. */
  override getTimestamp(): number {
    return this.current;
  }

  setTimeout(callback: () => void, delay: number): TimerHandle {
    const id = this.nextId++;
    const timer = { id, due: this.current + Math.max(0, delay), callback };
    this.timers.set(id, timer);
    this.push(timer);
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
   * Moves time forward by `ms`, letting pending promise continuations run before and after each timer
   * (as Node does between timer callbacks). Timers that those continuations start within the window also run.
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
    while (this.heap.length > 0 && !this.timers.has(this.heap[0].id)) this.pop();
    const top = this.heap[0];
    if (!top || top.due > target) return undefined;
    this.pop();
    return top;
  }

  private push(timer: FakeTimer): void {
    const heap = this.heap;
    heap.push(timer);
    for (let i = heap.length - 1; i > 0;) {
      const parent = (i - 1) >> 1;
      if (byDue(heap[i], heap[parent]) >= 0) break;
      [heap[i], heap[parent]] = [heap[parent], heap[i]];
      i = parent;
    }
  }

  private pop(): void {
    const heap = this.heap;
    const last = heap.pop()!;
    if (heap.length === 0) return;
    heap[0] = last;
    for (let i = 0; ;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let min = i;
      if (l < heap.length && byDue(heap[l], heap[min]) < 0) min = l;
      if (r < heap.length && byDue(heap[r], heap[min]) < 0) min = r;
      if (min === i) return;
      [heap[i], heap[min]] = [heap[min], heap[i]];
      i = min;
    }
  }
}

function byDue(a: FakeTimer, b: FakeTimer): number {
  return a.due - b.due || a.id - b.id;
}

/** Resolves once every promise continuation queued so far (and those they queue) has run. @publicApi */
export function flushPromises(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
