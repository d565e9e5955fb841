import { RateLimiterRejectedError } from '../resilience.errors.js';

const ADAPTIVE_THROTTLING = Symbol.for('nest-resilience.adaptive-throttling');

/**
 * Thrown when adaptive throttling rejects a call locally: the dependency has refused too large a share of
 * recent requests. It is a `RateLimiterRejectedError` (so `isRateLimiterRejectedError` and the HTTP 429 /
 * RPC payload mappings cover it); `isAdaptiveThrottlingRejectedError` tells it apart.
 *
 * @publicApi
 */
export class AdaptiveThrottlingRejectedError extends RateLimiterRejectedError {
  /** Why the call was rejected: always `adaptive-throttling`. */
  declare readonly reason: 'adaptive-throttling';

  constructor(
    /** The probability the call was rejected with, in [0, 1]. */
    readonly rejectProbability: number,
    /** Requests counted in the window, this one included. */
    readonly requests: number,
    /** Requests the dependency accepted in the window. */
    readonly accepts: number,
  ) {
    super(
      `The operation was throttled locally: the dependency accepted ${accepts} of ${requests} recent requests ` +
        `(reject probability ${rejectProbability.toFixed(3)}).`,
      undefined,
      'adaptive-throttling',
    );
  }
}
// A subtype of RateLimiterRejectedError: it keeps that brand and adds its own mark.
Object.defineProperty(AdaptiveThrottlingRejectedError.prototype, ADAPTIVE_THROTTLING, { value: true });
Object.defineProperty(AdaptiveThrottlingRejectedError.prototype, 'name', {
  value: 'AdaptiveThrottlingRejectedError',
  writable: true,
  configurable: true,
});

/** Whether `error` is an `AdaptiveThrottlingRejectedError` (also a `RateLimiterRejectedError`). @publicApi */
export function isAdaptiveThrottlingRejectedError(error: unknown): error is AdaptiveThrottlingRejectedError {
  return (
    typeof error === 'object' && error !== null && (error as Record<symbol, unknown>)[ADAPTIVE_THROTTLING] === true
  );
}
