import { importJWK, importPKCS8 } from 'jose';
import * as oidc from 'openid-client';
import { ResilienceValidationError } from '../core/index.js';
import {
  CLIENT_AUTHENTICATION_METHODS,
  effectiveAuthenticationMethod,
  type OAuthClientOptions,
} from './oauth-client.options.js';
import { OAUTH_RULES } from './oauth.messages.js';

/**
 * openid-client's client authentication for the configured method. The private key of
 * `private_key_jwt` is imported with `jose` (a JWK or a PKCS#8 PEM) and never leaves this function.
 *
 * @internal
 */
export async function createClientAuthentication(options: OAuthClientOptions): Promise<oidc.ClientAuth> {
  const method = effectiveAuthenticationMethod(options);
  switch (method) {
    case 'client_secret_basic':
      return oidc.ClientSecretBasic(options.clientSecret);
    case 'client_secret_post':
      return oidc.ClientSecretPost(options.clientSecret);
    case 'none':
      return oidc.None();
    case 'private_key_jwt': {
      const raw = options.clientPrivateKey!;
      const jwk = typeof raw === 'string' ? undefined : raw;
      const alg = options.clientAssertionAlgorithm ?? jwk?.alg ?? 'RS256';
      const key = jwk ? await importJWK(jwk, alg) : await importPKCS8(raw as string, alg);
      if (key instanceof Uint8Array) throw new TypeError(OAUTH_RULES.asymmetricKey);
      return oidc.PrivateKeyJwt({ key, kid: options.clientPrivateKeyId ?? jwk?.kid });
    }
  }
}

/**
 * Checks the configured method against the provider's `token_endpoint_auth_methods_supported` (absent
 * means `client_secret_basic` only, RFC 8414 §2). A mismatch names both lists.
 *
 * @internal
 */
export function checkAuthenticationMethodSupported(
  options: OAuthClientOptions,
  supported: readonly string[] | undefined,
): void {
  const method = effectiveAuthenticationMethod(options);
  const offered = supported ?? ['client_secret_basic'];
  if (offered.includes(method)) return;
  throw new ResilienceValidationError(
    [
      {
        path: 'oauth.clientAuthentication',
        value: method,
        rule: OAUTH_RULES.methodNotSupported(offered, CLIENT_AUTHENTICATION_METHODS),
      },
    ],
    OAUTH_RULES.methodMismatch,
  );
}
