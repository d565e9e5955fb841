import type { JWK, JWTPayload } from 'jose';
import { OptionsValidator, type ResiliencePipeline, type TimeProvider } from '../core/index.js';
import type { OAuthLogger } from './oauth-events.logger.js';
import { OAUTH_RULES } from './oauth.messages.js';
import type { PendingAuthorizationStore, PendingLoginLimits } from './pending-authorization.store.js';

/**
 * How the client authenticates at the token endpoint (RFC 6749 §2.3, OpenID Connect Core §9):
 * `client_secret_basic` (HTTP Basic), `client_secret_post` (in the form body), `private_key_jwt` (a JWT
 * assertion signed with the client's private key, RFC 7523) or `none` (a public client).
 *
 * @publicApi
 */
export type ClientAuthenticationMethod = 'client_secret_basic' | 'client_secret_post' | 'private_key_jwt' | 'none';

/** Every client authentication method this client implements. @publicApi */
export const CLIENT_AUTHENTICATION_METHODS: readonly ClientAuthenticationMethod[] = [
  'client_secret_basic',
  'client_secret_post',
  'private_key_jwt',
  'none',
];

/** A private JWK (with `d`), as JSON-parsed from a file or an environment variable. @publicApi */
export type ClientPrivateJwk = JWK;

/**
 * The settings of the default token pipeline (`defaultTokenPipeline`), used when no `pipeline` is given.
 * All durations in milliseconds.
 *
 * @publicApi
 */
export interface TokenRequestOptions {
  /** Timeout of one request to the provider. Default 5000. */
  attemptTimeout?: number;
  /**
   * The whole exchange (every attempt and wait) must fit in this. A `Retry-After` that would end past it
   * fails at once with 503 and the `Retry-After`. Default 15000 (authorization codes live ~60 s).
   */
  deadline?: number;
  /** Retries after the first attempt, of transient failures only. Default 2. */
  retries?: number;
  /** Base delay of the jittered exponential backoff. Default 200. */
  retryDelay?: number;
  /** Transient failures in a row that open the circuit. Default 5. */
  breakerThreshold?: number;
  /** How long the circuit stays open. Default 30000. */
  breakDuration?: number;
}

/** Options of an `OAuthClient`: the provider, the client's registration, and how its requests run. @publicApi */
export interface OAuthClientOptions {
  /** The provider's issuer URL (its metadata is discovered from it, unless `endpoints` are given). */
  issuer: string;
  /** The provider's endpoints, when it offers no discovery document. */
  endpoints?: OAuthEndpoints;
  /** The client's identifier at the provider. */
  clientId: string;
  /** The shared secret of a confidential client (`client_secret_basic` / `client_secret_post`). */
  clientSecret?: string;
  /**
   * Default: `client_secret_basic` with a `clientSecret`, `private_key_jwt` with a `clientPrivateKey`,
   * else `none`. Checked against the provider's `token_endpoint_auth_methods_supported` at discovery.
   */
  clientAuthentication?: ClientAuthenticationMethod;
  /** For `private_key_jwt`: a private JWK, or a PKCS#8 PEM string. */
  clientPrivateKey?: ClientPrivateJwk | string;
  /** For `private_key_jwt`: the `kid` the provider knows the key by (default: the JWK's `kid`). */
  clientPrivateKeyId?: string;
  /** For `private_key_jwt`: the signing algorithm (default: the JWK's `alg`, else `RS256`). */
  clientAssertionAlgorithm?: string;
  /** The callback URL registered with the provider. */
  redirectUri: string;
  /** Where the provider sends the browser after logout (`post_logout_redirect_uri`). */
  postLogoutRedirectUri?: string;
  /**
   * Put the ID token into the logout URL as `id_token_hint`. Off by default: the URL goes through the
   * browser (history, proxies, Referer); `client_id` + `post_logout_redirect_uri` suffice.
   */
  logoutWithIdTokenHint?: boolean;
  /** Default `['openid']`. */
  scopes?: string[];
  /** Only `S256` exists here: `plain` is refused at start-up (RFC 7636 §7.2, RFC 9700 §2.1.1). */
  pkceMethod?: string;
  /** Accept a provider that does not advertise S256 (it must still support it). Default false. */
  allowProviderWithoutS256?: boolean;
  /** How long a started login may wait for its callback, in ms. Default 600000 (10 minutes). */
  pendingTtl?: number;
  /** Allow an `http:` issuer (development and tests on loopback only). Default false. */
  allowInsecureRequests?: boolean;
  /** Replaces the discovered token endpoint (e.g. a gateway in front of the provider). */
  tokenEndpoint?: string;
  /** Settings of the default token pipeline (ignored when `pipeline` is given). */
  tokenRequests?: TokenRequestOptions;
  /** Discovery and token requests run through this pipeline. Default: `defaultTokenPipeline(tokenRequests)`. */
  pipeline?: ResiliencePipeline<unknown>;
  /** Where pending logins wait. Default: in memory. */
  pendingStore?: PendingAuthorizationStore;
  /**
   * Caps on waiting logins (a browser has one at most: a new start replaces its previous one).
   * `perAddress` (default 50) per client address given to `startLogin` — past it 429 `too_many_logins`;
   * `total` (default 50000) overall — past it 503 `login_capacity`. 0 = no cap.
   */
  pendingLimits?: Partial<PendingLoginLimits>;
  /** Receives one line per event, with a stable code (never a secret). Default: no logging. */
  logger?: OAuthLogger;
  /** Repeats of an operator-only failure (e.g. `invalid_client`) within this window are logged once. Default 60000. */
  logBurstWindow?: number;
  /** The clock for expiry times and the token pipeline. Default: the system clock. */
  timeProvider?: TimeProvider;
}

/** Endpoints given by hand instead of discovered. @publicApi */
export interface OAuthEndpoints {
  /** The authorization endpoint the browser is sent to. */
  authorization: string;
  /** The token endpoint. */
  token: string;
  /** The JSON Web Key Set that signs ID tokens. */
  jwks: string;
  /** The UserInfo endpoint, for `userInfo()`. */
  userinfo?: string;
  /** The end-session endpoint, for `logoutUrl()`. */
  endSession?: string;
  /** Whether the provider sends `iss` in authorization responses (RFC 9207). Default true. */
  issuerInResponses?: boolean;
  /** Default: every method of `CLIENT_AUTHENTICATION_METHODS`. */
  tokenEndpointAuthMethods?: string[];
}

/** Tokens after a completed login or refresh. @publicApi */
export interface OAuthTokens {
  /** The access token. */
  readonly accessToken: string;
  /** The refresh token, when the provider issued one. */
  readonly refreshToken: string | undefined;
  /** The ID token, when the provider issued one (verified before it is returned). */
  readonly idToken: string | undefined;
  /** Milliseconds since the epoch, when the provider said. */
  readonly expiresAt: number | undefined;
  /** The granted scopes, space-separated, when the provider said. */
  readonly scope: string | undefined;
}

/** A login started by `startLogin`: where to send the browser, and the binding cookie to set. @publicApi */
export interface StartedLogin {
  /** Send the browser here. */
  readonly authorizationUrl: string;
  /** The `state` of the authorization request (single-use). */
  readonly state: string;
  /** Set as an HttpOnly cookie: the callback must come back with it (the login is bound to this browser). */
  readonly browserBinding: string;
  /** Names this login in every log line about it, from start to completion. */
  readonly correlationId: string;
}

/** A login completed by the callback: the tokens, the verified claims and where to go next. @publicApi */
export interface CompletedLogin {
  /** The tokens the provider issued. */
  readonly tokens: OAuthTokens;
  /** The verified ID token's claims. */
  readonly claims: JWTPayload;
  /** The same-site path the login was started for. */
  readonly returnTo: string;
  /** The correlation id of the login's log lines. */
  readonly correlationId: string;
}

/** The method used when none is configured. @internal */
export function effectiveAuthenticationMethod(o: OAuthClientOptions): ClientAuthenticationMethod {
  if (o.clientAuthentication) return o.clientAuthentication;
  if (o.clientPrivateKey !== undefined) return 'private_key_jwt';
  return o.clientSecret ? 'client_secret_basic' : 'none';
}

/** Checks the options, listing every problem at once; `plain` PKCE fails at start-up. @internal */
export function validateOAuthClientOptions(o: OAuthClientOptions): void {
  const v = new OptionsValidator('oauth');
  v.required('issuer', o.issuer);
  v.required('clientId', o.clientId);
  v.required('redirectUri', o.redirectUri);
  v.string('issuer', o.issuer)
    .string('clientId', o.clientId)
    .string('redirectUri', o.redirectUri)
    .string('clientSecret', o.clientSecret)
    .string('clientPrivateKeyId', o.clientPrivateKeyId)
    .string('clientAssertionAlgorithm', o.clientAssertionAlgorithm)
    .boolean('allowInsecureRequests', o.allowInsecureRequests)
    .boolean('allowProviderWithoutS256', o.allowProviderWithoutS256)
    .boolean('logoutWithIdTokenHint', o.logoutWithIdTokenHint)
    .oneOf('clientAuthentication', o.clientAuthentication, CLIENT_AUTHENTICATION_METHODS);
  if (o.pkceMethod !== undefined && o.pkceMethod !== 'S256') {
    v.add('pkceMethod', o.pkceMethod, OAUTH_RULES.s256Only);
  }
  const method = effectiveAuthenticationMethod(o);
  if ((method === 'client_secret_basic' || method === 'client_secret_post') && !o.clientSecret) {
    v.add('clientSecret', undefined, OAUTH_RULES.secretRequired(method));
  }
  if (method !== 'client_secret_basic' && method !== 'client_secret_post' && o.clientSecret !== undefined) {
    v.add('clientSecret', '[redacted]', OAUTH_RULES.notWithMethod(method));
  }
  if (method === 'private_key_jwt') {
    const key = o.clientPrivateKey;
    const isJwk = typeof key === 'object' && key !== null && typeof key.kty === 'string';
    const isPem = typeof key === 'string' && key.includes('-----BEGIN PRIVATE KEY-----');
    if (!isJwk && !isPem) {
      v.add('clientPrivateKey', key === undefined ? undefined : '[redacted]', OAUTH_RULES.privateKey);
    } else if (isJwk && typeof key.d !== 'string') {
      v.add('clientPrivateKey', '[public key]', OAUTH_RULES.notPublicKey);
    }
  } else if (o.clientPrivateKey !== undefined) {
    v.add('clientPrivateKey', '[redacted]', OAUTH_RULES.notWithMethod(method));
  }
  if (
    o.scopes !== undefined &&
    (!Array.isArray(o.scopes) || o.scopes.some((s) => !/^[\x21\x23-\x5B\x5D-\x7E]+$/.test(s)))
  ) {
    v.add('scopes', o.scopes, OAUTH_RULES.scopeTokens);
  }
  for (const [name, value] of [
    ['issuer', o.issuer],
    ['redirectUri', o.redirectUri],
    ['postLogoutRedirectUri', o.postLogoutRedirectUri],
    ['tokenEndpoint', o.tokenEndpoint],
    ['endpoints.authorization', o.endpoints?.authorization],
    ['endpoints.token', o.endpoints?.token],
    ['endpoints.jwks', o.endpoints?.jwks],
  ] as const) {
    if (typeof value !== 'string') continue;
    try {
      const url = new URL(value);
      if (url.protocol !== 'https:' && !o.allowInsecureRequests) v.add(name, value, OAUTH_RULES.https);
    } catch {
      v.add(name, value, OAUTH_RULES.absoluteUrl);
    }
  }
  v.duration('pendingTtl', o.pendingTtl, { min: 1_000 });
  if (o.pendingLimits !== undefined) {
    const l = v.child('pendingLimits');
    l.knownKeys(o.pendingLimits, ['perAddress', 'total']);
    l.number('perAddress', o.pendingLimits.perAddress, { min: 0, integer: true }).number(
      'total',
      o.pendingLimits.total,
      { min: 0, integer: true },
    );
  }
  v.duration('logBurstWindow', o.logBurstWindow);
  const t = o.tokenRequests;
  if (t !== undefined) {
    const c = v.child('tokenRequests');
    c.knownKeys(t, ['attemptTimeout', 'deadline', 'retries', 'retryDelay', 'breakerThreshold', 'breakDuration']);
    c.duration('attemptTimeout', t.attemptTimeout, { min: 1 })
      .duration('deadline', t.deadline, { min: 1 })
      .number('retries', t.retries, { min: 0, max: 10, integer: true })
      .duration('retryDelay', t.retryDelay)
      .number('breakerThreshold', t.breakerThreshold, { min: 1, integer: true })
      .duration('breakDuration', t.breakDuration, { min: 1 });
    if (t.attemptTimeout !== undefined && t.deadline !== undefined && t.attemptTimeout > t.deadline) {
      c.add('attemptTimeout', t.attemptTimeout, OAUTH_RULES.withinDeadline(t.deadline));
    }
  }
  v.throwIfInvalid(OAUTH_RULES.invalidOptions);
}
