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
