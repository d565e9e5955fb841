import type { ResilienceContext } from '../../context/resilience.context.js';
import type { TimeProvider, TimerHandle } from '../../time/time.provider.js';
import {
  rejectedLease,
  TIME_BASED_LEASE,
  admittedLease,
  type RateLimiter,
  type RateLimitLease,
} from './rate-limiter.model.js';
import { WaiterQueue } from './waiter.queue.js';

/**
 * What the time-based limiters share: permits come back with time (computed from timestamps on each
 * call), queued callers are served in arrival order when they do, and one timer runs only while somebody
 * waits.
 *
 * @internal
 */
export abstract class ReplenishingLimiter implements RateLimiter {
  private readonly queue = new WaiterQueue();
  private timer: TimerHandle;
  private disposed = false;

  protected constructor(
    protected readonly time: TimeProvider,
    private readonly queueLimit: number,
  ) {}

  /** Callers waiting. */
  get queuedCount(): number {
    return this.queue.length;
  }

  /** A permit when the limit allows one now; otherwise a place in the queue until it does, or a rejection with the estimated wait. */
  acquire(context: ResilienceContext): RateLimitLease | Promise<RateLimitLease> {
    // A caller cancelled already takes nothing: a spent time-based permit never comes back early.
    if (context._scope.aborted) return Promise.reject(context._scope.reason);
    const now = this.time.now();
    this.replenish(now);
    if (this.queue.length === 0 && this.tryTake()) return admittedLease(this.remaining(), this.resetAfter(now));
    if (this.queue.length < this.queueLimit && !this.disposed) {
      const waiting = new Promise<RateLimitLease>((resolve, reject) =>
        this.queue.enqueue(context, () => resolve(TIME_BASED_LEASE), reject),
      );
      // Nobody queued when the caller was cancelled already: no timer then.
      if (this.queue.length > 0) this.schedule(now);
      return waiting;
    }
    return rejectedLease(
      Math.max(0, this.retryAfter(now, this.queue.length)),
      undefined,
      this.remaining(),
      this.resetAfter(now),
    );
  }

  isIdle(): boolean {
    this.replenish(this.time.now());
    return this.queue.length === 0 && this.isFull();
  }

  dispose(): void {
    this.disposed = true;
    if (this.timer !== undefined) this.time.clearTimeout(this.timer);
    this.timer = undefined;
    this.queue.cancelAll(new Error('The rate limiter was disposed.'));
  }

  /** Adds the permits that came back since the last call. */
  protected abstract replenish(now: number): void;
  /** Takes a permit if one is free. */
  protected abstract tryTake(): boolean;
  /** When the next permits come back. */
  protected abstract nextReplenishAt(now: number): number;
  /** How long until a permit would be free for one more caller behind `queued` others. */
  protected abstract retryAfter(now: number, queued: number): number;
  /** Whether every permit is free. */
  protected abstract isFull(): boolean;
  /** Permits free now (whole ones). */
  protected abstract remaining(): number;
  /** Milliseconds from `now` until every permit is free again (0 when they are). */
  protected abstract resetAfter(now: number): number;

  private schedule(now: number): void {
    if (this.timer !== undefined) return;
    this.timer = this.time.setTimeout(
      () => {
        this.timer = undefined;
        this.serveQueue();
      },
      Math.max(0, this.nextReplenishAt(now) - now),
    );
  }

  private serveQueue(): void {
    const now = this.time.now();
    this.replenish(now);
    while (this.queue.length > 0 && this.tryTake()) this.queue.grantNext();
    if (this.queue.length > 0) this.schedule(now);
  }
}
