import {
  ResiliencePipelineBuilder,
  type ResilienceContext,
  ResiliencePropertyKey,
  systemTimeProvider,
  type ResiliencePipeline,
  type TimeProvider,
} from '../core/index.js';
import type { TokenRequestOptions } from './oauth-client.options.js';
import { getTokenRetryAfter } from './oauth-failure.mapper.js';
import { handleTransientTokenFailure, isAmbiguousTokenFailure } from './token-endpoint.predicates.js';

/** The correlation id of the login or refresh a token or discovery request belongs to, in the context's properties. @publicApi */
export const OAUTH_CORRELATION_ID = new ResiliencePropertyKey<string>('oauth.correlationId');

/**
 * Set on the executions of a code exchange or a refresh: requests that spend a grant. After an ambiguous
 * failure of one (`isAmbiguousTokenFailure`: a timeout, a connection lost after sending), the default
 * pipeline retries it at most once.
 *
 * @publicApi
 */
export const OAUTH_SPENDS_GRANT = new ResiliencePropertyKey<boolean>('oauth.spendsGrant');

/** Set by the default pipeline once an execution that spends a grant has failed ambiguously. */
const AMBIGUOUS_FAILURE_SEEN = new ResiliencePropertyKey<boolean>('oauth.ambiguousFailureSeen');

/**
 * The token pipeline by default: a total `deadline` (15 s), `retries` (2) of transient failures only
 * (network, timeout, 5xx, 429 — never `invalid_grant`, `invalid_client`, an ID-token failure and friends)
 * with jittered exponential backoff from `retryDelay` (200 ms), honouring `Retry-After` wherever the
 * response sits (a wait that would end past the deadline gives up at once), a consecutive-failure circuit
 * breaker (`breakerThreshold` 5, `breakDuration` 30 s) that counts only those transient failures, and an
 * `attemptTimeout` (5 s) per request, which aborts the request (its socket is closed). Permanent answers
 * never reach the breaker, so garbage callbacks cannot open it. A code exchange or refresh that failed
 * ambiguously (timed out, or lost its connection after sending: the provider may have spent the grant) is
 * retried at most once, whatever `retries` says.
 *
 * @publicApi
 */
export function defaultTokenPipeline(
  options: TokenRequestOptions = {},
  timeProvider: TimeProvider = systemTimeProvider,
  /** Told of every failed attempt that is retried (timeouts included), e.g. to log it. */
  onRetry?: (failure: { error: unknown; attemptNumber: number; retryDelay: number; correlationId?: string }) => void,
): ResiliencePipeline<unknown> {
  return new ResiliencePipelineBuilder({ name: 'oauth-token', timeProvider })
    .addTimeout(options.deadline ?? 15_000)
    .addRetry({
      maxRetryAttempts: options.retries ?? 2,
      backoffType: 'exponential',
      delay: options.retryDelay ?? 200,
      useJitter: true,
      shouldHandle: retryTokenFailure,
      // No maxDelay: a Retry-After is waited for in full, or — past the deadline — not at all.
      retryAfter: ({ outcome }) => (outcome.ok ? undefined : getTokenRetryAfter(outcome.error, timeProvider.now())),
      onRetry: onRetry
        ? ({ outcome, attemptNumber, retryDelay, context }) => {
            if (!outcome.ok) {
              const correlationId = context.hasProperties ? context.properties.get(OAUTH_CORRELATION_ID) : undefined;
              onRetry({ error: outcome.error, attemptNumber, retryDelay, correlationId });
            }
          }
        : undefined,
    })
    .addCircuitBreaker({
      kind: 'consecutive',
      failureThreshold: options.breakerThreshold ?? 5,
      breakDuration: options.breakDuration ?? 30_000,
      shouldHandle: handleTransientTokenFailure,
    })
    .addTimeout({ timeout: options.attemptTimeout ?? 5_000, mode: 'aggressive' })
    .build();
}

/** Transient failures, except that an execution spending a grant gets one retry at most after an ambiguous failure. */
function retryTokenFailure(
  args: Parameters<typeof handleTransientTokenFailure>[0] & { context: ResilienceContext },
): boolean {
  if (!handleTransientTokenFailure(args)) return false;
  const { context, outcome } = args;
  if (!context.hasProperties || context.properties.get(OAUTH_SPENDS_GRANT) !== true) return true;
  if (context.properties.get(AMBIGUOUS_FAILURE_SEEN) === true) return false;
  if (!outcome.ok && isAmbiguousTokenFailure(outcome.error)) context.properties.set(AMBIGUOUS_FAILURE_SEEN, true);
  return true;
}
