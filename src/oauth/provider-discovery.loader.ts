import * as oidc from 'openid-client';
import { ResilienceValidationError, type ResiliencePipeline } from '../core/index.js';
import { abortableFetch, withAttemptSignal } from './attempt-signal.js';
import { checkAuthenticationMethodSupported, createClientAuthentication } from './client-authentication.factory.js';
import { CLIENT_AUTHENTICATION_METHODS, type OAuthClientOptions } from './oauth-client.options.js';
import { failureClass, getTokenRetryAfter } from './oauth-failure.mapper.js';
import { describeFailure } from './oauth-secret.redaction.js';
import { OAuthFailure } from './oauth.errors.js';
import { handleTransientTokenFailure } from './token-endpoint.predicates.js';

/**
 * The provider's configuration: discovered through the pipeline (or built from `endpoints`), checked to
 * fit this client — S256 advertised, the client authentication method offered — with the token
 * endpoint replaced when `tokenEndpoint` says so. Every request of the configuration goes through
 * `abortableFetch`: the timeout of the pipeline attempt it runs in aborts it (and closes its socket).
 *
 * @internal
 */
export async function loadProviderConfiguration(
  options: OAuthClientOptions,
  pipeline: ResiliencePipeline<unknown>,
): Promise<oidc.Configuration> {
  const { issuer, clientId, allowInsecureRequests, endpoints } = options;
  const clientAuth = await createClientAuthentication(options);
  if (endpoints) {
    checkAuthenticationMethodSupported(options, endpoints.tokenEndpointAuthMethods ?? CLIENT_AUTHENTICATION_METHODS);
    const config = new oidc.Configuration(
      {
        issuer,
        authorization_endpoint: endpoints.authorization,
        token_endpoint: endpoints.token,
        jwks_uri: endpoints.jwks,
        userinfo_endpoint: endpoints.userinfo,
        end_session_endpoint: endpoints.endSession,
        code_challenge_methods_supported: ['S256'],
        authorization_response_iss_parameter_supported: endpoints.issuerInResponses ?? true,
      },
      clientId,
      undefined,
      clientAuth,
    );
    if (allowInsecureRequests) oidc.allowInsecureRequests(config);
    config[oidc.customFetch] = abortableFetch;
    return config;
  }
  const discovered = await pipeline.execute(
    (context) =>
      withAttemptSignal(context.signal, () =>
        oidc.discovery(new URL(issuer), clientId, undefined, clientAuth, {
          [oidc.customFetch]: abortableFetch,
          ...(allowInsecureRequests ? { execute: [oidc.allowInsecureRequests] } : {}),
        }),
      ),
    { operationKey: 'oauth.discovery' },
  );
  const metadata = discovered.serverMetadata();
  if (!options.allowProviderWithoutS256 && !metadata.code_challenge_methods_supported?.includes('S256')) {
    throw new OAuthFailure('provider_mismatch', 502, 'The provider does not fit this client.', undefined, undefined, {
      detail: 'its metadata does not advertise PKCE with S256 (code_challenge_methods_supported)',
    });
  }
  checkAuthenticationMethodSupported(options, metadata.token_endpoint_auth_methods_supported);
  if (!options.tokenEndpoint) return discovered;
  // The metadata as plain data (without its helper methods), with the token endpoint replaced.
  const plainMetadata = JSON.parse(JSON.stringify(metadata)) as oidc.ServerMetadata;
  const config = new oidc.Configuration(
    { ...plainMetadata, token_endpoint: options.tokenEndpoint },
    clientId,
    undefined,
    clientAuth,
  );
  if (allowInsecureRequests) oidc.allowInsecureRequests(config);
  config[oidc.customFetch] = abortableFetch;
  return config;
}

/**
 * A discovery error as the user gets it: 503 `discovery_failed` when trying again may help, 502
 * `provider_mismatch` when the provider does not fit (the details, for operators, in `detail`).
 *
 * @internal
 */
export function mapDiscoveryFailure(error: unknown, issuer: string, now: number): OAuthFailure {
  if (error instanceof OAuthFailure) return error;
  if (error instanceof ResilienceValidationError) {
    const failure = new OAuthFailure(
      'provider_mismatch',
      502,
      'The provider does not fit this client.',
      undefined,
      undefined,
      {
        detail: error.message,
      },
    );
    Object.defineProperty(failure, 'cause', { value: error, enumerable: false });
    return failure;
  }
  const code = (error as { code?: unknown } | null)?.code;
  if (code === 'OAUTH_JSON_ATTRIBUTE_COMPARISON_FAILED') {
    return new OAuthFailure('provider_mismatch', 502, 'The provider does not fit this client.', undefined, undefined, {
      detail: `the discovery document of ${issuer} announces another issuer (issuer must equal the configured URL exactly, RFC 8414 §3.3)`,
    });
  }
  if (handleTransientTokenFailure({ outcome: { ok: false, error } }) || failureClass(error) === 'circuit-open') {
    return new OAuthFailure(
      'discovery_failed',
      503,
      "The provider's metadata could not be read; try again.",
      undefined,
      getTokenRetryAfter(error, now) ?? (error as { retryAfter?: number }).retryAfter,
      { detail: `${failureClass(error)} (${describeFailure(error)})` },
    );
  }
  return new OAuthFailure('provider_mismatch', 502, 'The provider does not fit this client.', undefined, undefined, {
    detail: `its discovery document could not be used (${describeFailure(error)})`,
  });
}
