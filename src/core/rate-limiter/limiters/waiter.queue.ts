import type { ResilienceContext } from '../../context/resilience.context.js';

/** One queued caller. @internal */
export interface QueueEntry {
  /** Called with the permit when the caller's turn comes. */
  grant(): void;
  /** Called if the caller's context is cancelled while it waits. */
  cancel(reason: unknown): void;
  /** Set by the queue: removes the abort listener. */
  detach?: () => void;
  /** Set by the queue when the caller left. */
  cancelled?: boolean;
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

  /** Queues an entry that is its own grant and cancel. */
  add(context: ResilienceContext, waiter: QueueEntry): void {
    if (context._scope.canAbort) {
      const signal = context.signal;
      // Removed (`detach`) as soon as the waiter is served or cancelled otherwise, so it runs at most once.
      const onAbort = (): void => {
        waiter.cancelled = true;
        this.live--;
        waiter.cancel(context._scope.reason);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      waiter.detach = () => signal.removeEventListener('abort', onAbort);
    }
    this.items.push(waiter);
    this.live++;
  }

  /** Hands a permit to the next caller still waiting; false when nobody waits. */
  grantNext(): boolean {
    while (this.head < this.items.length) {
      const waiter = this.items[this.head];
      this.items[this.head++] = undefined;
      if (this.head >= 1_024 && this.head * 2 >= this.items.length) {
        this.items = this.items.slice(this.head);
        this.head = 0;
      }
      if (waiter && !waiter.cancelled) {
        this.live--;
        waiter.detach?.();
        waiter.grant();
        return true;
      }
    }
    return false;
  }

  /** Cancels every waiting caller with `reason`. */
  cancelAll(reason: unknown): void {
    const items = this.items.slice(this.head);
    this.items = [];
    this.head = 0;
    this.live = 0;
    for (const waiter of items) {
      if (waiter && !waiter.cancelled) {
        waiter.cancelled = true;
        waiter.detach?.();
        waiter.cancel(reason);
      }
    }
  }
}
