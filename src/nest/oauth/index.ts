/**
 * `OAuthModule` and `OAuthClientService` for NestJS applications. Needs the NestJS peers,
 * `openid-client` and `jose`.
 *
 * @module
 */
export {
  OAUTH_BINDING_COOKIE,
  OAuthClientService,
  OAuthExceptionFilter,
  OAuthModule,
  type OAuthModuleAsyncOptions,
  type OAuthModuleOptions,
} from './oauth.module.js';
