import { OAuthFailure } from './oauth.errors.js';
import { escapeProviderValue, OAUTH_ERROR_CHARSET } from './oauth-secret.redaction.js';

const STATE_PATTERN = /^[A-Za-z0-9_-]{16,256}$/;
const MAX_PARAMETER_LENGTH = 4_096;
/** Parameters an authorization response carries at most once (RFC 6749 §3.1: "MUST NOT be included more than once"). */
const SINGLE_PARAMETERS = ['code', 'state', 'iss', 'error', 'error_description', 'error_uri', 'session_state'];

/** The callback's parameters, checked for shape only (nothing is trusted yet). @internal */
export interface CallbackParameters {
  readonly state: string;
  readonly code: string | null;
  readonly iss: string | null;
  /** The provider's `error`, validated (RFC 6749 §4.1.2.1 charset) and HTML-escaped. */
  readonly error: string | null;
  /** The provider's `error_description` when valid, HTML-escaped; dropped otherwise. */
  readonly errorDescription: string | undefined;
}

/**
 * The syntactic checks of a callback, all made before the pending login is touched and before any
 * token request: bounded sizes, no repeated parameter, a well-formed `state`, a provider `error` in the
 * RFC 6749 §4.1.2.1 character set.
 *
 * @internal
 */
export function parseCallbackParameters(params: URLSearchParams): CallbackParameters {
  for (const [name, value] of params) {
    if (name.length > 64 || value.length > MAX_PARAMETER_LENGTH) {
      throw new OAuthFailure('malformed_callback', 400, 'The callback carries an oversized parameter.');
    }
  }
  for (const name of SINGLE_PARAMETERS) {
    if (params.getAll(name).length > 1) {
      throw new OAuthFailure(
        'malformed_callback',
        400,
        `The callback repeats the "${name}" parameter.`,
        undefined,
        undefined,
        {
          check: `repeated:${name}`,
        },
      );
    }
  }
  const state = params.get('state');
  if (!state) throw new OAuthFailure('missing_state', 400, 'The callback has no state.');
  if (!STATE_PATTERN.test(state)) throw new OAuthFailure('malformed_callback', 400, 'The callback state is malformed.');
  const error = params.get('error');
  if (error !== null && (error.length > 128 || !OAUTH_ERROR_CHARSET.test(error))) {
    throw new OAuthFailure(
      'malformed_callback',
      400,
      'The provider error is not a valid OAuth error code.',
      undefined,
      undefined,
      {
        check: 'error-charset',
      },
    );
  }
  const description = params.get('error_description');
  const validDescription =
    description !== null && description.length <= 1_024 && OAUTH_ERROR_CHARSET.test(description)
      ? description
      : undefined;
  return {
    state,
    code: params.get('code'),
    iss: params.get('iss'),
    error: error === null ? null : escapeProviderValue(error),
    errorDescription: validDescription === undefined ? undefined : escapeProviderValue(validDescription.slice(0, 256)),
  };
}
