import {
  ResiliencePipelineBuilder,
  ResiliencePropertyKey,
  systemTimeProvider,
  type ResiliencePipeline,
  type TimeProvider,
} from '../core/index.js';
import type { TokenRequestOptions } from './oauth-client.options.js';
import { getTokenRetryAfter } from './oauth-failure.mapper.js';
import { handleTransientTokenFailure } from './token-endpoint.predicates.js';

/** The correlation id of the login or refresh a token or discovery request belongs to, in the context's properties. @publicApi */
export const OAUTH_CORRELATION_ID = new ResiliencePropertyKey<string>('oauth.correlationId');

/**
 * The token pipeline by default: a total `deadline` (15 s), `retries` (2) of transient failures only
 * (network, timeout, 5xx, 429 — never `invalid_grant`, `invalid_client`, an ID-token failure and friends)
 * with jittered exponential backoff from `retryDelay` (200 ms), honouring `Retry-After` wherever the
 * response sits (a wait that would end past the deadline gives up at once), a consecutive-failure circuit
 * breaker (`breakerThreshold` 5, `breakDuration` 30 s) that counts only those transient failures, and an
 * `attemptTimeout` (5 s) per request. Permanent answers never reach the breaker, so garbage callbacks
 * cannot open it.
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
      shouldHandle: handleTransientTokenFailure,
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
