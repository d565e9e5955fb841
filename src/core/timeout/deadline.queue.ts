import { SystemTimeProvider, type TimeProvider, type TimerHandle } from '../time/time.provider.js';

/** Something that ends at a deadline unless it is removed first. @internal */
export interface DeadlineEntry {
  /** When the entry is due, per the queue's clock. Set by the queue. */
  deadline: number;
  /** Links of the queue's list; the queue owns them. */
  previousEntry: DeadlineEntry | undefined;
  nextEntry: DeadlineEntry | undefined;
  /** True while the entry waits in a queue (a timer-per-call queue leaves it set after the deadline until removal). */
  queued: boolean;
  /** The handle of the entry's own timer, for queues that give each entry one. */
  timer: TimerHandle;
  /** Runs once when the deadline passes with the entry still queued (it has left the queue by then). */
  onDeadline(): void;
}

/** Where a timeout strategy puts the deadlines of its running calls. @internal */
export interface DeadlineQueue {
  /** Queues `entry` to end `timeout` ms from now; returns its deadline. */
  add(entry: DeadlineEntry, timeout: number): number;
  /** Takes `entry` out (its call settled); harmless if it already left. */
  remove(entry: DeadlineEntry): void;
}

/**
 * The deadlines of calls that share one duration. They fall due in the order the calls started, so a
 * doubly linked FIFO holds them (O(1) to add and to cancel) and one timer, armed for the oldest live
 * deadline, serves them all. Removing the oldest entry does not touch the timer: when it fires early it
 * is simply armed again for the entry now oldest. The timer is released when the last call settles: at
 * once on a fake or custom clock, and at the next turn of the event loop on the system clock, so that
 * back-to-back calls (one at a time, each settling before the next starts) reuse one timer instead of
 * setting and clearing one per call. On the system clock, deadlines are also counted from the time the
 * event loop's turn began (read once per turn), as Node counts its own timers (`setTimeout` reads the
 * loop's cached time): reading the clock costs more than the rest of a call on some machines.
 *
 * @internal
 */
export class FifoDeadlineQueue implements DeadlineQueue {
  private head: DeadlineEntry | undefined;
  private tail: DeadlineEntry | undefined;
  private size = 0;
  private handle: TimerHandle = undefined;
  /**
   * The deadline the timer is armed for (when it fires, at least this much time has passed); `Infinity`
   * while no timer is armed (every deadline is finite).
   */
  private armedFor = Infinity;
  /** The system clock: idle timers are released and the clock is read once per turn of the event loop. */
  private readonly perTurn: boolean;
  private turnEndScheduled = false;
  private turnStart = NaN;

  constructor(private readonly time: TimeProvider) {
    this.perTurn = time instanceof SystemTimeProvider;
  }

  add(entry: DeadlineEntry, timeout: number): number {
    const deadline = this.now() + timeout;
    entry.deadline = deadline;
    entry.queued = true;
    entry.nextEntry = undefined;
    // Deadlines arrive in order unless the clock stepped back; then the entry goes before the later ones.
    let before = this.tail;
    while (before !== undefined && before.deadline > deadline) before = before.previousEntry;
    entry.previousEntry = before;
    const after = before === undefined ? this.head : before.nextEntry;
    entry.nextEntry = after;
    if (before === undefined) this.head = entry;
    else before.nextEntry = entry;
    if (after === undefined) this.tail = entry;
    else after.previousEntry = entry;
    this.size++;
    if (deadline < this.armedFor) this.arm(deadline);
    return deadline;
  }

  remove(entry: DeadlineEntry): void {
    if (!entry.queued) return;
    this.unlink(entry);
    if (this.size === 0) this.releaseWhenIdle();
  }

  private unlink(entry: DeadlineEntry): void {
    entry.queued = false;
    const { previousEntry, nextEntry } = entry;
    if (previousEntry === undefined) this.head = nextEntry;
    else previousEntry.nextEntry = nextEntry;
    if (nextEntry === undefined) this.tail = previousEntry;
    else nextEntry.previousEntry = previousEntry;
    entry.previousEntry = undefined;
    entry.nextEntry = undefined;
    this.size--;
  }

  private arm(deadline: number): void {
    if (this.armedFor !== Infinity) this.time.clearTimeout(this.handle);
    this.armedFor = deadline;
    this.handle = this.time.setTimeout(this.fire, Math.max(0, deadline - this.now()));
  }

  /** Clears the timer (called with one armed; clearing none is harmless on the system clock's turn end). */
  private disarm(): void {
    this.armedFor = Infinity;
    this.time.clearTimeout(this.handle);
    this.handle = undefined;
  }

  private readonly fire = (): void => {
    // The timer fired, so its delay has passed even if the clock says otherwise (it may have stepped back).
    const now = Math.max(this.time.now(), this.armedFor);
    this.armedFor = Infinity;
    this.handle = undefined;
    for (let entry = this.head; entry !== undefined && entry.deadline <= now; entry = this.head) {
      this.unlink(entry);
      entry.onDeadline();
    }
    // An entry's handler may have started calls (and armed the timer) already.
    if (this.head !== undefined && this.head.deadline < this.armedFor) this.arm(this.head.deadline);
  };

  /** The clock, read once per turn of the event loop on the system clock. */
  private now(): number {
    if (!this.perTurn) return this.time.now();
    if (Number.isNaN(this.turnStart)) {
      this.turnStart = this.time.now();
      this.scheduleTurnEnd();
    }
    return this.turnStart;
  }

  private releaseWhenIdle(): void {
    if (this.perTurn) this.scheduleTurnEnd();
    else this.disarm();
  }

  private scheduleTurnEnd(): void {
    if (this.turnEndScheduled) return;
    this.turnEndScheduled = true;
    setImmediate(this.onTurnEnd);
  }

  private readonly onTurnEnd = (): void => {
    this.turnEndScheduled = false;
    this.turnStart = NaN;
    if (this.size === 0) this.disarm();
  };
}

/** Deadlines of varying durations (a timeout generator): one timer per call. @internal */
export class TimerPerCallDeadlineQueue implements DeadlineQueue {
  constructor(private readonly time: TimeProvider) {}

  add(entry: DeadlineEntry, timeout: number): number {
    entry.queued = true;
    // The deadline ends only an entry still queued, even on a clock whose clearTimeout does not cancel.
    entry.timer = this.time.setTimeout(() => {
      if (entry.queued) entry.onDeadline();
    }, timeout);
    return (entry.deadline = this.time.now() + timeout);
  }

  /** Clearing the timer of an entry whose deadline already passed is harmless (the `TimeProvider` contract). */
  remove(entry: DeadlineEntry): void {
    entry.queued = false;
    this.time.clearTimeout(entry.timer);
    entry.timer = undefined;
  }
}
