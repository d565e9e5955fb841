import { createHash, randomBytes } from 'node:crypto';

/** Unreserved characters only, 43 … 128 of them (RFC 7636 §4.1). @publicApi */
export const CODE_VERIFIER_PATTERN = /^[A-Za-z0-9\-._~]{43,128}$/;

/**
 * A PKCE code verifier: 32 random octets (256 bits, RFC 7636 §7.1), base64url without padding — exactly
 * 43 characters of the unreserved set (§4.1).
 *
 * @publicApi
 */
export function generateCodeVerifier(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * The S256 code challenge of a verifier: BASE64URL(SHA256(ASCII(verifier))) (RFC 7636 §4.2). `plain` is
 * never offered: clients able to use S256 must (§4.2, §7.2; RFC 9700 §2.1.1).
 *
 * @publicApi
 */
export function calculateCodeChallenge(verifier: string): string {
  if (!CODE_VERIFIER_PATTERN.test(verifier)) {
    throw new RangeError('A PKCE code verifier is 43 to 128 unreserved characters (RFC 7636 §4.1).');
  }
  return createHash('sha256').update(verifier, 'ascii').digest('base64url');
}

/** An opaque one-time value with 256 bits of entropy, for `state` and `nonce` (≥ 128 bits required). @publicApi */
export function generateOpaqueToken(): string {
  return randomBytes(32).toString('base64url');
}
