import type { ResilienceContext } from '../../context/resilience.context.js';
import { rejectedLease, type RateLimiter, type RateLimitLease } from '../rate-limiter.model.js';
import { WaiterQueue, type QueueEntry } from './waiter.queue.js';

/** Options of a concurrency limiter (the bulkhead): running calls and the FIFO queue behind them. @publicApi */
export interface ConcurrencyLimiterOptions {
  /** Calls that may run at once. */
  readonly permitLimit: number;
  /** Calls that may wait for a permit, in arrival order. Default 0. */
  readonly queueLimit?: number;
}

class ConcurrencyLease implements RateLimitLease {
  readonly acquired = true;
  private released = false;

  constructor(private readonly limiter: ConcurrencyLimiter) {}

  release(): void {
    if (this.released) return;
    this.released = true;
    this.limiter.releasePermit();
  }
}

/**
 * Limits how many calls run at once (Polly's `ConcurrencyLimiter`, the bulkhead): `permitLimit` run,
 * `queueLimit` wait in FIFO order, the rest are rejected. A released permit goes straight to the oldest
 * waiter.
 *
 * @publicApi
 */
export class ConcurrencyLimiter implements RateLimiter {
  private available: number;
  private readonly queue = new WaiterQueue();
  private readonly queueLimit: number;
  private disposed = false;

  constructor(private readonly options: ConcurrencyLimiterOptions) {
    this.available = options.permitLimit;
    this.queueLimit = options.queueLimit ?? 0;
  }

  /** Calls that may run at once. */
  get permitLimit(): number {
    return this.options.permitLimit;
  }

  /** Permits not in use. */
  get availablePermits(): number {
    return this.available;
  }

  /** Callers waiting. */
  get queuedCount(): number {
    return this.queue.length;
  }

  /** A permit at once when fewer than `permitLimit` calls run; otherwise a place in the queue, or a rejection when it is full. */
  acquire(context: ResilienceContext): RateLimitLease | Promise<RateLimitLease> {
    if (context._scope.aborted) return Promise.reject(context._scope.reason); // a caller cancelled already
    if (this.tryTake()) return new ConcurrencyLease(this);
    if (!this.hasQueueRoom()) return rejectedLease();
    return new Promise<RateLimitLease>((resolve, reject) =>
      this.queue.enqueue(context, () => resolve(new ConcurrencyLease(this)), reject),
    );
  }

  /**
   * Takes a permit if one is free. A free permit means nobody waits: a released permit goes straight to
   * the oldest waiter, and only comes back to the pool when nobody is left.
   */
  tryTake(): boolean {
    if (this.available > 0) {
      this.available--;
      return true;
    }
    return false;
  }

  /** Whether one more caller may queue. */
  hasQueueRoom(): boolean {
    return this.queue.length < this.queueLimit && !this.disposed;
  }

  /** Queues a caller; its `grant` runs holding a permit, which it must give back with `releasePermit`. */
  enqueue(context: ResilienceContext, entry: QueueEntry): void {
    this.queue.add(context, entry);
  }

  /** Gives a permit back: straight to the oldest waiter, if any. */
  releasePermit(): void {
    if (!this.queue.grantNext()) this.available++;
  }

  /** Every permit is back (so nobody waits either). */
  isIdle(): boolean {
    return this.available === this.options.permitLimit;
  }

  dispose(): void {
    this.disposed = true;
    this.queue.cancelAll(new Error('The concurrency limiter was disposed.'));
  }
}
