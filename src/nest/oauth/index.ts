/**
 * `OAuthModule` and `OAuthClientService` for NestJS applications. Needs the NestJS peers,
 * `openid-client` and `jose`.
 *
 * @module
 */
export {
  OAUTH_BINDING_COOKIE,
  OAuthClientService,
  OAuthModule,
  type OAuthModuleAsyncOptions,
  type OAuthModuleOptions,
} from './oauth.module.js';
export { OAuthExceptionFilter } from './oauth-exception.filter.js';
export {
  OAUTH_RESPONSE_HEADERS,
  OAuthResponseHeaders,
  setOAuthResponseHeaders,
  type HeaderSink,
} from './oauth-response.headers.js';
