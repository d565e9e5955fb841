import { DEFAULT_SHEDDABLE_RATIO, getCriticality, type Criticality } from '../../context/criticality.property.js';
import type { ResilienceContext } from '../../context/resilience.context.js';
import { createLightweightError, RateLimiterRejectedError } from '../../resilience.errors.js';
import { rejectedLease, type RateLimiter, type RateLimitLease } from './rate-limiter.model.js';
import { WaiterQueue, type QueueEntry } from './waiter.queue.js';

/** Options of a concurrency limiter (the bulkhead): running calls and the FIFO queue behind them. @publicApi */
export interface ConcurrencyLimiterOptions {
  /** Calls that may run at once. */
  readonly permitLimit: number;
  /** Calls that may wait for a permit, in arrival order. Default 0. */
  readonly queueLimit?: number;
  /** The share of `permitLimit` that `sheddable` calls may fill (they never wait). Default 0.8. */
  readonly sheddableRatio?: number;
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

/** The error a queued caller that gave its place to a `critical` one ends with. @internal */
export function shedError(): RateLimiterRejectedError {
  return createLightweightError(
    RateLimiterRejectedError,
    'The operation was shed by the limiter: a more critical call took its place in the queue.',
    { reason: 'shed' },
  );
}

/**
 * Limits how many calls run at once (Polly's `ConcurrencyLimiter`, the bulkhead): `permitLimit` run,
 * `queueLimit` wait, the rest are rejected. A released permit goes straight to the oldest `critical`
 * waiter, else the oldest other waiter. By criticality (`CRITICALITY_KEY` of the call's context):
 * `sheddable` calls run only while fewer than `sheddableRatio × permitLimit` calls run and never wait;
 * a `critical` call that finds the queue full takes the place of the most recently queued `default`
 * one, which is rejected (reason `shed`).
 *
 * @publicApi
 */
export class ConcurrencyLimiter implements RateLimiter {
  private available: number;
  private readonly queue = new WaiterQueue();
  private readonly criticalQueue = new WaiterQueue();
  private readonly queueLimit: number;
  private readonly sheddableLimit: number;
  private disposed = false;

  constructor(private readonly options: ConcurrencyLimiterOptions) {
    this.available = options.permitLimit;
    this.queueLimit = options.queueLimit ?? 0;
    this.sheddableLimit = options.permitLimit * (options.sheddableRatio ?? DEFAULT_SHEDDABLE_RATIO);
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
    return this.queue.length + this.criticalQueue.length;
  }

  /** A permit at once when fewer than `permitLimit` calls run; otherwise a place in the queue, or a rejection when it is full. */
  acquire(context: ResilienceContext): RateLimitLease | Promise<RateLimitLease> {
    if (context._scope.aborted) return Promise.reject(context._scope.reason); // a caller cancelled already
    const criticality = getCriticality(context);
    if (this.tryTake(criticality)) return new ConcurrencyLease(this);
    if (!this.makeQueueRoom(criticality)) return rejectedLease(undefined, this.rejectionReason(criticality));
    return new Promise<RateLimitLease>((resolve, reject) =>
      this.enqueue(
        context,
        {
          grant: () => resolve(new ConcurrencyLease(this)),
          cancel: reject,
          shed: () => resolve(rejectedLease(undefined, 'shed')),
        },
        criticality,
      ),
    );
  }

  /**
   * Takes a permit if one is free for a call of `criticality`. A free permit means nobody waits: a
   * released permit goes straight to a waiter, and only comes back to the pool when nobody is left.
   */
  tryTake(criticality: Criticality = 'default'): boolean {
    if (this.available > 0) {
      if (criticality === 'sheddable' && this.options.permitLimit - this.available >= this.sheddableLimit) return false;
      this.available--;
      return true;
    }
    return false;
  }

  /**
   * Whether one more caller of `criticality` may queue; for a `critical` one with the queue full, makes
   * room by shedding the most recently queued other caller. `sheddable` callers never queue.
   */
  makeQueueRoom(criticality: Criticality = 'default'): boolean {
    if (this.disposed || criticality === 'sheddable') return false;
    if (this.queue.length + this.criticalQueue.length < this.queueLimit) return true;
    return criticality === 'critical' && this.queue.shedNewest(shedError);
  }

  /** Why a call of `criticality` that got neither a permit nor a place in the queue is rejected. */
  rejectionReason(criticality: Criticality): 'limit' | 'shed' {
    return criticality === 'sheddable' ? 'shed' : 'limit';
  }

  /** Queues a caller; its `grant` runs holding a permit, which it must give back with `releasePermit`. */
  enqueue(context: ResilienceContext, entry: QueueEntry, criticality: Criticality = 'default'): void {
    (criticality === 'critical' ? this.criticalQueue : this.queue).add(context, entry);
  }

  /** Gives a permit back: straight to the oldest critical waiter, else the oldest waiter, if any. */
  releasePermit(): void {
    if (!this.criticalQueue.grantNext() && !this.queue.grantNext()) this.available++;
  }

  /** Every permit is back (so nobody waits either). */
  isIdle(): boolean {
    return this.available === this.options.permitLimit;
  }

  dispose(): void {
    this.disposed = true;
    const reason = new Error('The concurrency limiter was disposed.');
    this.criticalQueue.cancelAll(reason);
    this.queue.cancelAll(reason);
  }
}
