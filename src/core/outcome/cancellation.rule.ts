import type { Outcome } from './outcome.model.js';
import type { ResilienceContext } from '../context/resilience.context.js';

/**
 * The one cancellation check every strategy and every built-in predicate applies. An error is a
 * cancellation when it is a standard abort error (a DOM `AbortError`, Node's `ABORT_ERR`, axios'
 * `ERR_CANCELED`), or — given the context the call ran in — when the context's signal has aborted and
 * the error is the signal's reason (`controller.abort(new MyAbort())`, the callback rejecting with
 * `signal.reason`). Cancellations are never retried, never replaced by a fallback, never hedged and
 * never counted by a circuit breaker. For an outcome: `!outcome.ok && isCancellation(outcome.error, context)`.
 *
 * @publicApi
 */
export function isCancellation(error: unknown, context?: ResilienceContext): boolean {
  if (typeof error === 'object' && error !== null) {
    const { name, code } = error as { name?: unknown; code?: unknown };
    if (name === 'AbortError' || code === 'ABORT_ERR' || code === 'ERR_CANCELED') return true;
  }
  return context !== undefined && context.isCancellationRequested && error === context._scope.reason;
}

/**
 * Whether `error` is a standard abort error.
 *
 * @deprecated Use `isCancellation(error)`: without a context it is this check.
 * @publicApi
 */
export function isCancellationError(error: unknown): boolean {
  return isCancellation(error);
}

/**
 * Whether `outcome` is a failure whose error is a cancellation.
 *
 * @deprecated Use `!outcome.ok && isCancellation(outcome.error, context)`.
 * @publicApi
 */
export function isCancellationOutcome(outcome: Outcome<unknown>, context?: ResilienceContext): boolean {
  return !outcome.ok && isCancellation(outcome.error, context);
}
