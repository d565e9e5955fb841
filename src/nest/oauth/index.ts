export {
  OAUTH_BINDING_COOKIE,
  OAuthClientService,
  OAuthExceptionFilter,
  OAuthModule,
  type OAuthModuleAsyncOptions,
  type OAuthModuleOptions,
} from './oauth.module.js';
