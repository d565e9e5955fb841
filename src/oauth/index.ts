/**
 * `OAuthClient`: the authorization-code flow with PKCE, every provider request through a pipeline.
 * Needs `openid-client` and `jose`.
 *
 * @module
 */
export {
  calculateCodeChallenge,
  CODE_VERIFIER_PATTERN,
  generateCodeVerifier,
  generateOpaqueToken,
} from './pkce.helper.js';
export {
  InMemoryPendingAuthorizationStore,
  PendingLoginLimitError,
  type PendingAuthorization,
  type PendingAuthorizationStore,
  type PendingLoginLimits,
} from './pending-authorization.store.js';
export {
  getOAuthErrorCode,
  handleTransientTokenFailure,
  isAmbiguousTokenFailure,
  PERMANENT_TOKEN_ERRORS,
} from './token-endpoint.predicates.js';
export { OAuthFailure, type OAuthFailureCode, type OAuthFailureDetails } from './oauth.errors.js';
export { getTokenRetryAfter } from './oauth-failure.mapper.js';
export { escapeProviderValue, OAUTH_ERROR_CHARSET } from './oauth-secret.redaction.js';
export { OAuthLogCode, type OAuthLogger } from './oauth-events.logger.js';
export { defaultTokenPipeline, OAUTH_CORRELATION_ID, OAUTH_SPENDS_GRANT } from './token-endpoint.pipeline.js';
export {
  CLIENT_AUTHENTICATION_METHODS,
  type ClientAuthenticationMethod,
  type ClientPrivateJwk,
  type CompletedLogin,
  type OAuthClientOptions,
  type OAuthEndpoints,
  type OAuthTokens,
  type StartedLogin,
  type TokenRequestOptions,
} from './oauth-client.options.js';
export { OAuthClient } from './oauth.client.js';
