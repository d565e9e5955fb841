import type { ResilienceContext } from '../../context/resilience.context.js';

/** One queued caller. @internal */
export interface QueueEntry {
  /** Called with the permit when the caller's turn comes. */
  grant(): void;
  /** Called if the caller's context is cancelled while it waits, or the limiter is disposed; a second call does nothing. */
  cancel(reason: unknown): void;
  /** Set by the queue: removes the abort listener. */
  detach?: () => void;
  /** Set by the queue when the caller left. */
  cancelled?: boolean;
  /**
   * Called instead of `cancel` when the caller loses its place to a more critical one (`shedNewest`):
   * it should end with a rejection (reason `shed`).
   */
  shed?(): void;
}

class CallbackEntry implements QueueEntry {
  constructor(
    readonly grant: () => void,
    readonly cancel: (reason: unknown) => void,
  ) {}
}

/**
 * A FIFO queue of callers waiting for a permit, O(1) at both ends. A caller whose context is cancelled is
 * taken out of the count at once and skipped when reached, so it never delays those behind it.
 *
 * @internal
 */
export class WaiterQueue {
  private items: (QueueEntry | undefined)[] = [];
  private head = 0;
  private live = 0;

  /** Callers still waiting (cancelled ones excluded). */
  get length(): number {
    return this.live;
  }

  /**
   * Queues a caller: `grant` runs when a permit is handed to it; `cancel` runs (with the reason) if its
   * context is cancelled first.
   */
  enqueue(context: ResilienceContext, grant: () => void, cancel: (reason: unknown) => void): void {
    this.add(context, new CallbackEntry(grant, cancel));
  }

  /** Queues an entry that is its own grant and cancel; a caller cancelled already is cancelled at once. */
  add(context: ResilienceContext, waiter: QueueEntry): void {
    const scope = context._scope;
    // A context that can never be cancelled gets no signal (reading one would allocate it) and no listener.
    if (scope.canAbort) {
      if (scope.aborted) return waiter.cancel(scope.reason);
      const signal = context.signal;
      // Removed (`detach`) as soon as the waiter is served or cancelled otherwise, so it runs at most once.
      const onAbort = (): void => {
        waiter.cancelled = true;
        this.live--;
        waiter.cancel(scope.reason);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      waiter.detach = () => signal.removeEventListener('abort', onAbort);
    }
    this.items.push(waiter);
    this.live++;
  }

  /** Hands a permit to the next caller still waiting; false when nobody waits. */
  grantNext(): boolean {
    // Every slot from `head` on holds an entry; the slots before it were served and emptied.
    while (this.head < this.items.length) {
      const waiter = this.items[this.head]!;
      this.items[this.head++] = undefined;
      // Stryker disable next-line ConditionalExpression,LogicalOperator,EqualityOperator,ArithmeticOperator,BlockStatement: equivalent — dropping the served slots only bounds the array's memory (once they are 1,024 and half of it); who is served, and in what order, is the same without it
      if (this.head >= 1_024 && this.head * 2 >= this.items.length) {
        this.items = this.items.slice(this.head);
        this.head = 0;
      }
      if (!waiter.cancelled) {
        this.live--;
        waiter.detach?.();
        waiter.grant();
        return true;
      }
    }
    return false;
  }

  /**
   * Takes the most recently queued caller still waiting out of the queue and sheds it (`shed`, else
   * `cancel` with `reason()`); false when nobody waits.
   */
  shedNewest(reason: () => unknown): boolean {
    while (this.items.length > this.head) {
      const waiter = this.items.pop()!;
      if (waiter.cancelled) continue;
      this.live--;
      waiter.cancelled = true;
      waiter.detach?.();
      if (waiter.shed) waiter.shed();
      else waiter.cancel(reason());
      return true;
    }
    return false;
  }

  /** Cancels every waiting caller with `reason`, oldest first. */
  cancelAll(reason: unknown): void {
    const { items, head } = this;
    this.items = [];
    this.head = 0;
    this.live = 0;
    for (let i = head; i < items.length; i++) {
      const waiter = items[i]!;
      // A waiter that left was cancelled with its own reason: its listener is gone and its promise is
      // settled, so cancelling it again changes nothing.
      waiter.detach?.();
      waiter.cancel(reason);
    }
  }
}
