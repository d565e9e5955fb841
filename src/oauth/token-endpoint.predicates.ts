import { getHttpStatus, isTimeoutRejectedError, isTransientNetworkError, type Outcome } from '../core/index.js';

/**
 * The token-endpoint error codes of RFC 6749 §5.2 (and the ones registries add): permanent answers.
 * Never retried, never counted by a circuit breaker — otherwise anyone able to send garbage callbacks
 * could open the circuit and lock every user out.
 *
 * @publicApi
 */
export const PERMANENT_TOKEN_ERRORS: ReadonlySet<string> = new Set([
  'invalid_request',
  'invalid_client',
  'invalid_grant',
  'unauthorized_client',
  'unsupported_grant_type',
  'invalid_scope',
  'invalid_dpop_proof',
  'access_denied',
]);

/**
 * The OAuth `error` code an error carries: openid-client's `ResponseBodyError.error`, the `error`
 * parameter of a `WWW-Authenticate` challenge (a 401 to HTTP Basic, RFC 6749 §5.2), or a body.
 *
 * @publicApi
 */
export function getOAuthErrorCode(error: unknown): string | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const e = error as { error?: unknown; code?: unknown; cause?: unknown; response?: { data?: { error?: unknown } } };
  const challenges = Array.isArray(e.cause) ? (e.cause as { parameters?: { error?: unknown } }[]) : [];
  for (const candidate of [
    e.error,
    e.response?.data?.error,
    (e.cause as { error?: unknown } | undefined)?.error,
    ...challenges.map((c) => c?.parameters?.error),
  ]) {
    if (typeof candidate === 'string' && /^[a-z_]+$/.test(candidate)) return candidate;
  }
  return undefined;
}

/**
 * What a token request may retry (RFC 6749 §5.2, RFC 9700 and the notes in the research): network
 * failures, timeouts, 5xx and 429 (with its `Retry-After`). Never an OAuth error answer such as
 * `invalid_grant`, whatever its status. The same predicate tells circuit breakers what counts.
 *
 * @publicApi
 */
export function handleTransientTokenFailure({ outcome }: { readonly outcome: Outcome<unknown> }): boolean {
  if (outcome.ok) return false;
  const error = outcome.error;
  const code = getOAuthErrorCode(error);
  if (code !== undefined && PERMANENT_TOKEN_ERRORS.has(code)) return false;
  if (isTransientNetworkError(error) || isTimeoutRejectedError(error)) return true;
  if (error instanceof TypeError && error.message === 'fetch failed') return true;
  const status = getHttpStatus(error) ?? getHttpStatus((error as { cause?: unknown }).cause);
  return status !== undefined && (status === 429 || status >= 500);
}
