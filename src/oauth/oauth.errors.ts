import { ResilienceError } from '../core/index.js';

/** Stable codes of the failures an OAuth callback or token call can end with. @publicApi */
export type OAuthFailureCode =
  | 'malformed_callback'
  | 'missing_state'
  | 'unknown_state'
  | 'browser_mismatch'
  | 'issuer_mismatch'
  | 'missing_issuer'
  | 'provider_error'
  | 'missing_code'
  | 'invalid_grant'
  | 'code_consumed'
  | 'invalid_client'
  | 'token_request_rejected'
  | 'invalid_id_token'
  | 'token_endpoint_unavailable'
  | 'invalid_return_to'
  | 'session_ended'
  | 'discovery_failed';

/**
 * A rejected login, callback or token call: a stable `code`, the HTTP status to answer with, and — for
 * errors the provider returned — its OAuth `error`. Messages never contain the verifier, tokens or the
 * client secret.
 *
 * @publicApi
 */
export class OAuthFailure extends ResilienceError {
  constructor(
    /** Stable code of the failure, for logs and error bodies. */
    readonly code: OAuthFailureCode,
    /** The HTTP status to answer with. */
    readonly status: number,
    message: string,
    /** The provider's `error` (RFC 6749 §4.1.2.1, §5.2), when it sent one. */
    readonly providerError?: string,
    /** Milliseconds after which trying again may work (a 429 or 503 of the token endpoint). */
    readonly retryAfter?: number,
  ) {
    super(message);
  }
}
Object.defineProperty(OAuthFailure.prototype, 'name', { value: 'OAuthFailure', writable: true });
