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
  type PendingAuthorization,
  type PendingAuthorizationStore,
} from './pending-authorization.store.js';
export { getOAuthErrorCode, handleTransientTokenFailure, PERMANENT_TOKEN_ERRORS } from './token-endpoint.predicates.js';
export { OAuthFailure, type OAuthFailureCode } from './oauth.errors.js';
export {
  defaultTokenPipeline,
  OAuthClient,
  type CompletedLogin,
  type OAuthClientOptions,
  type OAuthEndpoints,
  type OAuthTokens,
  type StartedLogin,
} from './oauth.client.js';
