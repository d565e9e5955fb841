/**
 * Every rule text the OAuth client reports about its options and the provider (`ValidationIssue.rule`),
 * and the errors of a misconfigured client key.
 *
 * @internal
 */
export const OAUTH_RULES = {
  invalidOptions: 'Invalid OAuth client options',
  s256Only: 'must be "S256": plain PKCE is refused (RFC 7636 §7.2, RFC 9700 §2.1.1)',
  secretRequired: (method: string) => `is required for clientAuthentication "${method}"`,
  notWithMethod: (method: string) => `must not be set with clientAuthentication "${method}"`,
  privateKey: 'must be a private JWK or a PKCS#8 PEM',
  notPublicKey: 'must be a private key (a JWK with "d")',
  asymmetricKey: 'clientPrivateKey must be an asymmetric private key',
  scopeTokens: 'must be a list of scope tokens (RFC 6749 §3.3)',
  https: 'must be https (or set allowInsecureRequests for loopback development)',
  absoluteUrl: 'must be an absolute URL',
  withinDeadline: (deadline: number) => `must not exceed the deadline (${deadline})`,
  methodNotSupported: (offered: readonly string[], implemented: readonly string[]) =>
    `is not supported by the provider: its token_endpoint_auth_methods_supported are [${offered.join(', ')}]; ` +
    `this client implements [${implemented.join(', ')}]`,
  methodMismatch: 'OAuth client authentication does not fit the provider',
} as const;
