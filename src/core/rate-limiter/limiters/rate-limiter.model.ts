import type { ResilienceContext } from '../../context/resilience.context.js';
import type { RateLimiterRejectionReason } from '../../resilience.errors.js';

/** The answer of a limiter: a permit to release, or a rejection with an estimated wait. @publicApi */
export interface RateLimitLease {
  /** Whether the call may run; when `false`, `retryAfter` may estimate the wait. */
  readonly acquired: boolean;
  /** When rejected: milliseconds after which a permit may be available, when the limiter can tell. */
  readonly retryAfter?: number;
  /** When rejected: why (`limit` or `shed`), when the limiter says. */
  readonly reason?: RateLimiterRejectionReason;
  /**
   * Permits left for the caller (its partition) after this answer: set by the token bucket, fixed
   * window and sliding window limiters and the Redis limiter when they answer at once (the inbound
   * guard's `RateLimit-Remaining`).
   */
  readonly remaining?: number;
  /**
   * Milliseconds until the caller's quota is whole again (every permit back), set with `remaining`;
   * 0 when it is whole (the inbound guard's `RateLimit-Reset`).
   */
  readonly resetAfter?: number;
  /** Gives the permit back (concurrency limiters); idempotent; a no-op for time-based limiters. */
  release(): void;
}

/**
 * A source of permits. `acquire` answers synchronously when it can (a free permit, or a rejection) and
 * with a promise when the caller is queued; a queued caller whose context is cancelled leaves the queue
 * at once (the promise rejects with the cancellation reason).
 *
 * @publicApi
 */
export interface RateLimiter {
  /** Asks for a permit for one call (synchronously when the answer is known at once); release the lease when the call ends. */
  acquire(context: ResilienceContext): RateLimitLease | Promise<RateLimitLease>;
  /** True when the limiter holds nothing worth keeping (full, no permits out, nobody queued). */
  isIdle(): boolean;
  /** Rejects every queued caller and stops the limiter's timers. */
  dispose(): void;
}

/** The `release` of a lease with nothing to give back (a time-based permit, a rejection). @internal */
export function releaseNothing(): void {}

/** The lease of a time-based limiter that says nothing of the quota: nothing to give back. @internal */
export const TIME_BASED_LEASE: RateLimitLease = Object.freeze({ acquired: true, release: releaseNothing });

/**
 * A permit with nothing to give back (a time-based limiter's), with the caller's quota after it when
 * known. For limiters of your own.
 *
 * @publicApi
 */
export function admittedLease(remaining?: number, resetAfter?: number): RateLimitLease {
  if (remaining === undefined && resetAfter === undefined) return TIME_BASED_LEASE;
  return { acquired: true, remaining, resetAfter, release: releaseNothing };
}

/** A rejection, with the estimated wait, its reason and the caller's quota when known. For limiters of your own. @publicApi */
export function rejectedLease(
  retryAfter?: number,
  reason?: RateLimiterRejectionReason,
  remaining?: number,
  resetAfter?: number,
): RateLimitLease {
  return { acquired: false, retryAfter, reason, remaining, resetAfter, release: releaseNothing };
}

/**
 * What a limiter may tell inspection about itself (the adaptive concurrency limiter does): read by the
 * registry's `limiterStatistics()`, and so by the admin API, the dashboard and metrics.
 *
 * @publicApi
 */
export interface LimiterSnapshot {
  /** The configuration section that makes such limiters (`adaptiveConcurrency`). */
  readonly section: string;
  /** The limit's kind, e.g. `adaptive-gradient2`. */
  readonly kind: string;
  /** Calls that may run at once now. */
  readonly permitLimit: number;
  /** Calls running now. */
  readonly permitsInUse: number;
  /** Callers waiting. */
  readonly queueLength: number;
  /** Callers that may wait. */
  readonly queueLimit: number;
  /** Calls turned away since the limiter was made. */
  readonly rejections: number;
}

/** A limiter that describes itself to inspection. @publicApi */
export interface InspectableRateLimiter extends RateLimiter {
  /** The limiter's figures now. */
  snapshot(): LimiterSnapshot;
}
