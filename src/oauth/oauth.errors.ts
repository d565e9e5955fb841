import { ResilienceError } from '../core/index.js';

/** Stable codes of the failures an OAuth login, callback or token call can end with. @publicApi */
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
  | 'invalid_token_response'
  | 'token_endpoint_unavailable'
  | 'invalid_return_to'
  | 'session_ended'
  | 'discovery_failed'
  | 'provider_mismatch'
  | 'store_unavailable'
  | 'too_many_logins'
  | 'login_capacity';

/** What else an `OAuthFailure` may tell (none of it reaches a public answer body). @publicApi */
export interface OAuthFailureDetails {
  /** The ID-token or token-response check that failed (`aud`, `iss`, `exp`, `nonce`, `alg`, `signature`…). */
  readonly check?: string;
  /** For operators (logs, start-up errors): may name hosts; never a secret. */
  readonly detail?: string;
  /** The provider's `error_description`, when it is valid (RFC 6749 §4.1.2.1), HTML-escaped. */
  readonly providerErrorDescription?: string;
  /** The same-site path the failed login was started for, once the callback found its pending login. */
  readonly returnTo?: string;
}

/**
 * A rejected login, callback or token call: a stable `code`, the HTTP status to answer with, and — for
 * errors the provider returned — its OAuth `error` (validated against RFC 6749 §4.1.2.1 and
 * HTML-escaped). Messages never contain the verifier, tokens, the client secret or internal hosts.
 *
 * @publicApi
 */
export class OAuthFailure extends ResilienceError {
  /** For operators (logs, start-up errors): may name hosts; never a secret. */
  declare readonly detail: string | undefined;
  /** The ID-token or token-response check that failed, when one did. */
  readonly check: string | undefined;
  /** The provider's valid `error_description`, HTML-escaped, when it sent one. */
  readonly providerErrorDescription: string | undefined;
  /**
   * The same-site path the login was started for, when a failed callback got that far (its pending
   * login was found): a page for the failure can offer to sign in again towards it.
   */
  returnTo: string | undefined;

  constructor(
    /** Stable code of the failure, for logs and error bodies. */
    readonly code: OAuthFailureCode,
    /** The HTTP status to answer with. */
    readonly status: number,
    message: string,
    /** The provider's `error` (RFC 6749 §4.1.2.1, §5.2), when it sent one. */
    readonly providerError?: string,
    /** Milliseconds after which trying again may work (a 429 or 503 of the token endpoint, an open circuit). */
    readonly retryAfter?: number,
    details: OAuthFailureDetails = {},
  ) {
    super(message);
    this.check = details.check;
    this.providerErrorDescription = details.providerErrorDescription;
    this.returnTo = details.returnTo;
    // Not enumerable: it may name internal hosts and must not be serialised into an answer by accident.
    Object.defineProperty(this, 'detail', { value: details.detail, enumerable: false });
  }
}
Object.defineProperty(OAuthFailure.prototype, 'name', { value: 'OAuthFailure', writable: true });
