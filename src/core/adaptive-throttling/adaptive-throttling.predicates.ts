import { isCancellation } from '../outcome/cancellation.rule.js';
import { getHttpStatus } from '../http/http.predicates.js';
import type { OutcomePredicateArguments } from '../outcome/outcome.predicates.js';
import { isBrokenCircuitError } from '../resilience.errors.js';

/** gRPC status codes of a refusal: `RESOURCE_EXHAUSTED` (8) and `UNAVAILABLE` (14), by number or name. */
const REFUSAL_CODES: ReadonlySet<unknown> = new Set([8, 14, 'RESOURCE_EXHAUSTED', 'UNAVAILABLE']);

/**
 * True for a sign that a dependency refused a request because it is overloaded: an HTTP status 429 or
 * 503 (an axios or Nest error, a `fetch` or axios response, a remote `ResilienceRpcError` payload), a
 * gRPC code `RESOURCE_EXHAUSTED` or `UNAVAILABLE` (8, 14, or the names), or a circuit breaker's rejection
 * (`BrokenCircuitError`, `IsolatedCircuitError`).
 *
 * @publicApi
 */
export function isOverloadRejection(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (isBrokenCircuitError(value)) return true;
  // The places `getHttpStatus` reads, without building its list (this runs on every call).
  const v = value as { status?: unknown; statusCode?: unknown; response?: { status?: unknown }; code?: unknown };
  if (isRefusalStatus(v.status) || isRefusalStatus(v.statusCode) || isRefusalStatus(v.response?.status)) return true;
  const getStatus = (value as { getStatus?: unknown }).getStatus;
  if (typeof getStatus === 'function' && isRefusalStatus(getHttpStatus(value))) return true;
  return REFUSAL_CODES.has(v.code);
}

function isRefusalStatus(status: unknown): boolean {
  return status === 429 || status === 503;
}

/**
 * The default `shouldHandle` of adaptive throttling: an outcome (error or result) that
 * `isOverloadRejection` recognises, unless it is a cancellation. Named `overload` in configuration.
 *
 * @publicApi
 */
export function handleOverloadRejection({ outcome, context }: OutcomePredicateArguments<unknown>): boolean {
  if (outcome.ok) return isOverloadRejection(outcome.value);
  return isOverloadRejection(outcome.error) && !isCancellation(outcome.error, context);
}
