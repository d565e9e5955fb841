import type { Outcome } from '../outcome.model.js';
import { isCancellationError } from '../resilience.errors.js';
import type { ResilienceContext } from './resilience.context.js';

/**
 * The one cancellation rule every strategy and every built-in predicate applies. An error is a
 * cancellation when it is a standard abort error (`isCancellationError`: a DOM `AbortError`, Node's
 * `ABORT_ERR`, axios' `ERR_CANCELED`), or when the context's signal has aborted and the error is the
 * signal's reason (`controller.abort(new MyAbort())`, the callback rejecting with `signal.reason`).
 * Cancellations are never retried, never replaced by a fallback, never hedged and never counted by a
 * circuit breaker.
 *
 * @publicApi
 */
export function isCancellation(error: unknown, context?: ResilienceContext): boolean {
  if (isCancellationError(error)) return true;
  return context !== undefined && context.isCancellationRequested && error === context._scope.reason;
}

/** `isCancellation` for an outcome: a failure whose error is a cancellation. @publicApi */
export function isCancellationOutcome(outcome: Outcome<unknown>, context?: ResilienceContext): boolean {
  return !outcome.ok && isCancellation(outcome.error, context);
}
