import { createRemoteJWKSet, jwtVerify, type JWTPayload } from 'jose';
import type * as oidc from 'openid-client';
import { responseCheckFailure } from './oauth-failure.mapper.js';
import { OAuthFailure } from './oauth.errors.js';

/**
 * Verifies ID tokens with `jose` after openid-client's own checks: the signature against the provider's
 * JWKS, `alg` (never `none`), `iss`, `aud`, `exp`, the login's `nonce` and, for a refresh, the user's `sub`.
 * A failure names the check.
 *
 * @internal
 */
export class IdTokenVerifier {
  private jwks: ReturnType<typeof createRemoteJWKSet> | undefined;

  constructor(private readonly clientId: string) {}

  /**
   * @param nonce - the login's nonce; `undefined` for an ID token from a refresh, which carries none of its
   *   own (OpenID Connect Core 12.2).
   * @param subject - the signed-in user's `sub`: a refreshed ID token must name the same user.
   */
  async verify(
    config: oidc.Configuration,
    idToken: string | undefined,
    nonce: string | undefined,
    subject?: string,
  ): Promise<JWTPayload> {
    const metadata = config.serverMetadata();
    if (!idToken) throw responseCheckFailure({ kind: 'id_token', check: 'presence' });
    if (!metadata.jwks_uri) throw responseCheckFailure({ kind: 'id_token', check: 'jwks_uri' });
    this.jwks ??= createRemoteJWKSet(new URL(metadata.jwks_uri));
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(idToken, this.jwks, {
        issuer: metadata.issuer,
        audience: this.clientId,
      }));
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if (code === 'ERR_JWKS_TIMEOUT' || (error instanceof TypeError && error.message === 'fetch failed')) {
        throw new OAuthFailure('discovery_failed', 503, "The provider's signing keys could not be read; try again.");
      }
      throw responseCheckFailure({ kind: 'id_token', check: joseCheck(error) });
    }
    if (nonce !== undefined && payload.nonce !== nonce)
      throw responseCheckFailure({ kind: 'id_token', check: 'nonce' });
    if (subject !== undefined && payload.sub !== subject)
      throw responseCheckFailure({ kind: 'id_token', check: 'sub' });
    return payload;
  }
}

/** Which check of a `jose` verification failed. */
function joseCheck(error: unknown): string {
  const e = error as { code?: unknown; claim?: unknown };
  if (typeof e.claim === 'string') return e.claim;
  switch (e.code) {
    case 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED':
      return 'signature';
    case 'ERR_JOSE_ALG_NOT_ALLOWED':
    case 'ERR_JOSE_NOT_SUPPORTED':
      return 'alg';
    case 'ERR_JWKS_NO_MATCHING_KEY':
    case 'ERR_JWKS_MULTIPLE_MATCHING_KEYS':
      return 'kid';
    default:
      return 'jwt';
  }
}
