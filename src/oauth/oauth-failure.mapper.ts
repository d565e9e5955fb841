import {
  getHttpRetryAfter,
  getHttpStatus,
  isBrokenCircuitError,
  isTimeoutRejectedError,
  isTransientNetworkError,
} from '../core/index.js';
import { OAuthFailure } from './oauth.errors.js';
import { getOAuthErrorCode, handleTransientTokenFailure, PERMANENT_TOKEN_ERRORS } from './token-endpoint.predicates.js';

/**
 * The `Retry-After` of a failed token or discovery request, in milliseconds from `now`, wherever the
 * HTTP layer put the response: on the error (`headers`, `response.headers`) or in its `cause`
 * (openid-client puts the `Response` of a 5xx or a non-JSON answer there). Seconds and HTTP-dates.
 *
 * @publicApi
 */
export function getTokenRetryAfter(error: unknown, now: number): number | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const cause = (error as { cause?: unknown }).cause;
  return getHttpRetryAfter(error, now) ?? getHttpRetryAfter(cause, now);
}

/** The HTTP status of a failed request, on the error or its cause. @internal */
export function getTokenHttpStatus(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  return getHttpStatus(error) ?? getHttpStatus((error as { cause?: unknown }).cause);
}

/** A failed check of a token response: of its ID token, or of the response itself. @internal */
export interface ResponseCheckFailure {
  readonly kind: 'id_token' | 'token_response';
  /** `alg`, `aud`, `iss`, `exp`, `nonce`, `signature`, `presence`, `json`, `body`… */
  readonly check: string;
}

const ID_TOKEN_CODES = new Set([
  'OAUTH_JWT_CLAIM_COMPARISON_FAILED',
  'OAUTH_JWT_TIMESTAMP_CHECK_FAILED',
  'OAUTH_KEY_SELECTION_FAILED',
]);
const RESPONSE_CODES = new Set([
  'OAUTH_INVALID_RESPONSE',
  'OAUTH_PARSE_ERROR',
  'OAUTH_JSON_ATTRIBUTE_COMPARISON_FAILED',
  'OAUTH_RESPONSE_IS_NOT_JSON',
  'OAUTH_RESPONSE_IS_NOT_CONFORM',
  'OAUTH_UNSUPPORTED_OPERATION',
]);

/**
 * Recognises openid-client's rejections of a 2xx token response: ID-token claim and header checks
 * (which it makes before ours), and bodies that are no token response at all. Reads only codes,
 * claim names and statuses — never the response.
 *
 * @internal
 */
export function classifyResponseFailure(error: unknown): ResponseCheckFailure | undefined {
  if (!(error instanceof Error)) return undefined;
  const code = (error as { code?: unknown }).code;
  if (typeof code !== 'string') return undefined;
  const status = getTokenHttpStatus(error);
  if (!ID_TOKEN_CODES.has(code) && !RESPONSE_CODES.has(code)) return undefined;
  // A non-JSON or non-conforming answer with an error status is a failed request, not a bad token response.
  if ((code === 'OAUTH_RESPONSE_IS_NOT_JSON' || code === 'OAUTH_RESPONSE_IS_NOT_CONFORM') && status !== undefined) {
    if (status < 200 || status > 299) return undefined;
  }
  const inner = error.cause instanceof Error ? error.cause : undefined;
  const message = `${error.message} ${inner?.message ?? ''}`;
  const claim = (inner?.cause as { claim?: unknown } | undefined)?.claim;
  if (ID_TOKEN_CODES.has(code) || /ID Token|JWT|"id_token"/.test(message)) {
    let check: string;
    if (typeof claim === 'string') check = claim;
    else if (/"id_token"/.test(message)) check = 'presence';
    else
      check = /"(alg|typ|aud|iss|exp|iat|nbf|nonce|azp|sub|auth_time|c_hash|s_hash|kid)"/.exec(message)?.[1] ?? 'jwt';
    return { kind: 'id_token', check: /unsupported JWS/.test(message) ? 'alg' : check };
  }
  if (code === 'OAUTH_RESPONSE_IS_NOT_JSON' || code === 'OAUTH_PARSE_ERROR')
    return { kind: 'token_response', check: 'json' };
  if (code === 'OAUTH_RESPONSE_IS_NOT_CONFORM') return { kind: 'token_response', check: 'status' };
  const property = /"response" body "(\w+)"/.exec(message)?.[1];
  return { kind: 'token_response', check: property ?? 'body' };
}

/** How a transient failure of the provider looked, for logs. @internal */
export function failureClass(error: unknown): string {
  if (isBrokenCircuitError(error)) return 'circuit-open';
  if (isTimeoutRejectedError(error) || (error as { code?: unknown } | null)?.code === 'OAUTH_TIMEOUT') return 'timeout';
  if (isTransientNetworkError(error) || (error instanceof TypeError && error.message === 'fetch failed')) {
    return 'network';
  }
  const status = getTokenHttpStatus(error);
  if (status === 429) return 'http-429';
  if (status !== undefined && status >= 500) return 'http-5xx';
  if (status !== undefined) return `http-${status}`;
  return 'other';
}

/** A failure that ends a token exchange, as the user gets it. @internal */
export function mapTokenFailure(error: unknown, ambiguous: boolean, now: number): OAuthFailure {
  if (error instanceof OAuthFailure) return error;
  const code = getOAuthErrorCode(error);
  const status = getTokenHttpStatus(error);
  if (code === 'invalid_grant') {
    return ambiguous
      ? new OAuthFailure(
          'code_consumed',
          400,
          'The code was spent by an earlier attempt whose answer was lost: start the login again.',
          code,
        )
      : new OAuthFailure(
          'invalid_grant',
          400,
          'The provider refused the code (expired, replayed or not issued for this login).',
          code,
        );
  }
  if (code === 'invalid_client' || code === 'unauthorized_client' || (code === undefined && status === 401)) {
    return new OAuthFailure(
      'invalid_client',
      502,
      'The provider refused this client: its configuration must be fixed.',
      code ?? 'invalid_client',
    );
  }
  const response = classifyResponseFailure(error);
  if (response) return responseCheckFailure(response);
  if (
    code !== undefined &&
    (PERMANENT_TOKEN_ERRORS.has(code) || !handleTransientTokenFailure({ outcome: { ok: false, error } }))
  ) {
    return new OAuthFailure('token_request_rejected', 400, 'The provider refused the token request.', code);
  }
  if (isBrokenCircuitError(error)) {
    return new OAuthFailure(
      'token_endpoint_unavailable',
      503,
      'The provider is unavailable; try again later.',
      undefined,
      error.retryAfter,
    );
  }
  if (status !== undefined && status < 500 && status !== 429 && status !== 408) {
    return new OAuthFailure('token_request_rejected', 400, 'The provider refused the token request.', code);
  }
  const retryAfter = getTokenRetryAfter(error, now);
  const reason = failureClass(error) === 'timeout' ? 'timed out' : 'failed';
  return new OAuthFailure(
    'token_endpoint_unavailable',
    503,
    `The token request ${reason}; try again.`,
    undefined,
    retryAfter,
  );
}

/** The failure for a token response that did not pass a check. @internal */
export function responseCheckFailure(failure: ResponseCheckFailure): OAuthFailure {
  return failure.kind === 'id_token'
    ? new OAuthFailure(
        'invalid_id_token',
        502,
        'The provider returned an ID token that did not verify.',
        undefined,
        undefined,
        {
          check: failure.check,
        },
      )
    : new OAuthFailure(
        'invalid_token_response',
        502,
        'The provider returned something that is not a token response.',
        undefined,
        undefined,
        {
          check: failure.check,
        },
      );
}
