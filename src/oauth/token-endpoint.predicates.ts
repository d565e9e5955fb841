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

/** Network failures that happen before a request is sent: the provider cannot have seen it. */
const NOT_SENT_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/**
 * Whether a failed token request may have reached the provider and spent the grant: a timeout (the
 * request was sent, its answer never came) or a connection lost after sending (reset, closed socket).
 * Not so a refused connection or an unknown host, nor an HTTP answer. After such a failure a code
 * exchange or refresh is tried at most once more (RFC 6749 §4.1.2: a second redemption only earns
 * `invalid_grant`, and makes the provider revoke what the first one issued).
 *
 * @publicApi
 */
export function isAmbiguousTokenFailure(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const e = error as { name?: unknown; code?: unknown };
  if (isTimeoutRejectedError(error) || e.code === 'OAUTH_TIMEOUT') return true;
  if (e.name === 'AbortError' || e.name === 'TimeoutError') return true;
  const network = isTransientNetworkError(error) || (error instanceof TypeError && error.message === 'fetch failed');
  if (!network) return false;
  for (let current: unknown = error, depth = 0; current && typeof current === 'object' && depth < 5; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && NOT_SENT_CODES.has(code)) return false;
    current = (current as { cause?: unknown }).cause;
  }
  return true;
}
