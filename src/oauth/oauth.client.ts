import { createHash, timingSafeEqual } from 'node:crypto';
import * as oidc from 'openid-client';
import { createRemoteJWKSet, jwtVerify, type JWTPayload } from 'jose';
import {
  getHttpRetryAfter,
  isBrokenCircuitError,
  isTimeoutRejectedError,
  OptionsValidator,
  ResiliencePipelineBuilder,
  systemTimeProvider,
  type ResiliencePipeline,
  type TimeProvider,
} from '../core/index.js';
import { OAuthFailure } from './oauth.errors.js';
import { InMemoryPendingAuthorizationStore, type PendingAuthorizationStore } from './pending-authorization.store.js';
import { calculateCodeChallenge, generateCodeVerifier, generateOpaqueToken } from './pkce.helper.js';
import { getOAuthErrorCode, handleTransientTokenFailure } from './token-endpoint.predicates.js';

/** Options of an `OAuthClient`: the provider, the client's registration and the pipeline its requests run through. @publicApi */
export interface OAuthClientOptions {
  /** The provider's issuer URL (its metadata is discovered from it, unless `endpoints` are given). */
  issuer: string;
  /** The provider's endpoints, when it offers no discovery document. */
  endpoints?: OAuthEndpoints;
  /** The client's identifier at the provider. */
  clientId: string;
  /** For a confidential client (sent with HTTP Basic). Without it the client is public. */
  clientSecret?: string;
  /** The callback URL registered with the provider. */
  redirectUri: string;
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
  /** Discovery and token requests run through this pipeline. Default: `defaultTokenPipeline()`. */
  pipeline?: ResiliencePipeline<unknown>;
  /** Where pending logins wait. Default: in memory. */
  pendingStore?: PendingAuthorizationStore;
  /** The clock for expiry times and the pipeline. Default: the system clock. */
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
  /** The `state` of the authorization request. */
  readonly state: string;
  /** Set as an HttpOnly cookie: the callback must come back with it (the login is bound to this browser). */
  readonly browserBinding: string;
}

/** A login finished by `completeLogin`: the tokens, the verified ID-token claims and where to return. @publicApi */
export interface CompletedLogin {
  /** The tokens of the login. */
  readonly tokens: OAuthTokens;
  /** The verified ID token's claims. */
  readonly claims: JWTPayload;
  /** The same-site path the login was started for. */
  readonly returnTo: string;
}

const STATE_PATTERN = /^[A-Za-z0-9_-]{16,256}$/;
const MAX_PARAMETER_LENGTH = 4_096;

/**
 * The token pipeline by default: a 15 s total timeout, two retries of transient failures only
 * (network, timeout, 5xx, 429 with Retry-After — never `invalid_grant` and friends), a circuit breaker
 * that counts only those, and a 5 s timeout per attempt. Permanent answers never reach the breaker, so
 * garbage callbacks cannot open it.
 *
 * @publicApi
 */
export function defaultTokenPipeline(timeProvider: TimeProvider = systemTimeProvider): ResiliencePipeline<unknown> {
  return new ResiliencePipelineBuilder({ name: 'oauth-token', timeProvider })
    .addTimeout(15_000)
    .addRetry({
      maxRetryAttempts: 2,
      backoffType: 'exponential',
      delay: 200,
      useJitter: true,
      maxDelay: 5_000,
      shouldHandle: handleTransientTokenFailure,
      retryAfter: ({ outcome }) => (outcome.ok ? undefined : getHttpRetryAfter(outcome.error, Date.now())),
    })
    .addCircuitBreaker({
      kind: 'consecutive',
      failureThreshold: 5,
      breakDuration: 30_000,
      shouldHandle: handleTransientTokenFailure,
    })
    .addTimeout({ timeout: 5_000, mode: 'aggressive' })
    .build();
}

/**
 * An OAuth 2.0 / OpenID Connect client for the authorization-code flow with PKCE, hardened to RFC 9700:
 * S256 only, 256-bit state and nonce, state single-use and bound to the browser, `iss` checked (RFC 9207),
 * ID token signature and claims verified with `jose`, exactly one token request per state, refresh
 * single-flight per session. Protocol work is done by `openid-client`; every request to the provider runs
 * through a resilience pipeline.
 *
 * @publicApi
 */
export class OAuthClient {
  private readonly pipeline: ResiliencePipeline<unknown>;
  private readonly store: PendingAuthorizationStore;
  private readonly time: TimeProvider;
  private configuration: Promise<oidc.Configuration> | undefined;
  private jwks: ReturnType<typeof createRemoteJWKSet> | undefined;
  private readonly refreshing = new Map<string, Promise<OAuthTokens>>();

  constructor(private readonly options: OAuthClientOptions) {
    validateOAuthClientOptions(options);
    this.time = options.timeProvider ?? systemTimeProvider;
    this.pipeline = options.pipeline ?? defaultTokenPipeline(this.time);
    this.store = options.pendingStore ?? new InMemoryPendingAuthorizationStore(this.time);
  }

  /** The provider's metadata, discovered once (through the pipeline) and kept. */
  discover(): Promise<oidc.Configuration> {
    this.configuration ??= this.runDiscovery().catch((error: unknown) => {
      this.configuration = undefined; // the next call tries again
      throw error;
    });
    return this.configuration;
  }

  /** Starts a login: the URL to send the browser to, and the binding to set as an HttpOnly cookie. */
  async startLogin(options: { returnTo?: string } = {}): Promise<StartedLogin> {
    const returnTo = safeReturnTo(options.returnTo);
    const config = await this.discover();
    const codeVerifier = generateCodeVerifier();
    const state = generateOpaqueToken();
    const nonce = generateOpaqueToken();
    const browserBinding = generateOpaqueToken();
    await this.store.save(
      state,
      {
        codeVerifier,
        nonce,
        issuer: config.serverMetadata().issuer,
        redirectUri: this.options.redirectUri,
        returnTo,
        browserBinding: digest(browserBinding),
        createdAt: this.time.now(),
      },
      this.options.pendingTtl ?? 600_000,
    );
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: this.options.redirectUri,
      scope: (this.options.scopes ?? ['openid']).join(' '),
      code_challenge: calculateCodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
      state,
      nonce,
    });
    return { authorizationUrl: url.href, state, browserBinding };
  }

  /**
   * Finishes a login from the callback's query string and the browser's binding cookie. Every check
   * happens before the token request; a failed check makes no token request. The pending entry is taken
   * (once, atomically) before anything else about the provider is trusted.
   */
  async completeLogin(callback: {
    query: string | URLSearchParams;
    browserBinding: string | undefined;
  }): Promise<CompletedLogin> {
    const params = typeof callback.query === 'string' ? new URLSearchParams(callback.query) : callback.query;
    for (const [name, value] of params) {
      if (name.length > 64 || value.length > MAX_PARAMETER_LENGTH) {
        throw new OAuthFailure('malformed_callback', 400, 'The callback carries an oversized parameter.');
      }
    }
    const state = params.get('state');
    if (!state) throw new OAuthFailure('missing_state', 400, 'The callback has no state.');
    if (!STATE_PATTERN.test(state) || params.getAll('state').length > 1) {
      throw new OAuthFailure('malformed_callback', 400, 'The callback state is malformed.');
    }
    const pending = await this.store.take(state);
    if (!pending) throw new OAuthFailure('unknown_state', 400, 'The login is unknown, expired or already completed.');
    if (!callback.browserBinding || !sameDigest(digest(callback.browserBinding), pending.browserBinding)) {
      throw new OAuthFailure('browser_mismatch', 400, 'The login was started in another browser.');
    }
    const config = await this.discover();
    const iss = params.get('iss');
    if (iss !== null && iss !== pending.issuer)
      throw new OAuthFailure('issuer_mismatch', 400, 'The callback comes from another issuer.');
    if (iss === null && config.serverMetadata().authorization_response_iss_parameter_supported) {
      throw new OAuthFailure('missing_issuer', 400, 'The callback has no iss although the provider sends one.');
    }
    const providerError = params.get('error');
    if (providerError) {
      throw new OAuthFailure(
        'provider_error',
        400,
        `The provider refused the login (${sanitize(providerError)}).`,
        sanitize(providerError),
      );
    }
    if (!params.get('code')) throw new OAuthFailure('missing_code', 400, 'The callback has no code.');

    const currentUrl = new URL(pending.redirectUri);
    currentUrl.search = params.toString();
    let ambiguous = false;
    let response: oidc.TokenEndpointResponse;
    try {
      // The response travels through the pipeline boxed, so telemetry never sees the tokens.
      const boxed = await this.pipeline.execute(
        async () => {
          try {
            return new Redacted(
              await oidc.authorizationCodeGrant(config, currentUrl, {
                pkceCodeVerifier: pending.codeVerifier,
                expectedState: state,
                expectedNonce: pending.nonce,
                idTokenExpected: true,
              }),
            );
          } catch (error) {
            if (handleTransientTokenFailure({ outcome: { ok: false, error } })) ambiguous = true;
            throw error;
          }
        },
        { operationKey: 'oauth.token' },
      );
      response = boxed.reveal();
    } catch (error) {
      throw this.tokenFailure(error, ambiguous);
    }
    const claims = await this.verifyIdToken(config, response.id_token, pending.nonce);
    return { tokens: toTokens(response, this.time.now()), claims, returnTo: pending.returnTo ?? '/' };
  }

  /**
   * Refreshes a session's tokens. Concurrent refreshes of one session share one request (the provider
   * rotates refresh tokens and revokes the chain on reuse). `invalid_grant` ends the session.
   */
  refresh(sessionId: string, refreshToken: string): Promise<OAuthTokens> {
    let running = this.refreshing.get(sessionId);
    if (!running) {
      running = this.runRefresh(refreshToken).finally(() => this.refreshing.delete(sessionId));
      this.refreshing.set(sessionId, running);
    }
    return running;
  }

  /** The UserInfo claims for an access token, checked against the expected subject. */
  async userInfo(accessToken: string, expectedSubject: string): Promise<Record<string, unknown>> {
    const config = await this.discover();
    return this.pipeline.execute(() => oidc.fetchUserInfo(config, accessToken, expectedSubject), {
      operationKey: 'oauth.userinfo',
    });
  }

  /** The provider's end-session URL (RP-initiated logout), when it has one. */
  async logoutUrl(options: { idTokenHint?: string; postLogoutRedirectUri?: string } = {}): Promise<string | undefined> {
    const config = await this.discover();
    if (!config.serverMetadata().end_session_endpoint) return undefined;
    const params: Record<string, string> = {};
    if (options.idTokenHint) params.id_token_hint = options.idTokenHint;
    if (options.postLogoutRedirectUri) params.post_logout_redirect_uri = options.postLogoutRedirectUri;
    return oidc.buildEndSessionUrl(config, params).href;
  }

  private async runDiscovery(): Promise<oidc.Configuration> {
    const { issuer, clientId, clientSecret, allowInsecureRequests, endpoints } = this.options;
    if (endpoints) {
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
        clientSecret ? oidc.ClientSecretBasic(clientSecret) : oidc.None(),
      );
      if (allowInsecureRequests) oidc.allowInsecureRequests(config);
      return config;
    }
    const discovered = await this.pipeline
      .execute(
        () =>
          oidc.discovery(
            new URL(issuer),
            clientId,
            undefined,
            clientSecret ? oidc.ClientSecretBasic(clientSecret) : oidc.None(),
            allowInsecureRequests ? { execute: [oidc.allowInsecureRequests] } : undefined,
          ),
        { operationKey: 'oauth.discovery' },
      )
      .catch((error: unknown) => {
        throw new OAuthFailure(
          'discovery_failed',
          503,
          `The provider's metadata could not be read (${describe(error)}).`,
        );
      });
    const metadata = discovered.serverMetadata();
    if (!this.options.allowProviderWithoutS256 && !metadata.code_challenge_methods_supported?.includes('S256')) {
      throw new OAuthFailure('discovery_failed', 503, 'The provider does not advertise PKCE with S256.');
    }
    if (!this.options.tokenEndpoint) return discovered;
    // The metadata as plain data (without its helper methods), with the token endpoint replaced.
    const plainMetadata = JSON.parse(JSON.stringify(metadata)) as oidc.ServerMetadata;
    const config = new oidc.Configuration(
      { ...plainMetadata, token_endpoint: this.options.tokenEndpoint },
      clientId,
      undefined,
      clientSecret ? oidc.ClientSecretBasic(clientSecret) : oidc.None(),
    );
    if (allowInsecureRequests) oidc.allowInsecureRequests(config);
    return config;
  }

  private async runRefresh(refreshToken: string): Promise<OAuthTokens> {
    const config = await this.discover();
    try {
      const boxed = await this.pipeline.execute(
        async () => new Redacted(await oidc.refreshTokenGrant(config, refreshToken)),
        {
          operationKey: 'oauth.refresh',
        },
      );
      return toTokens(boxed.reveal(), this.time.now(), refreshToken);
    } catch (error) {
      if (getOAuthErrorCode(error) === 'invalid_grant') {
        throw new OAuthFailure(
          'session_ended',
          401,
          'The session ended: the provider no longer accepts its refresh token.',
          'invalid_grant',
        );
      }
      throw this.tokenFailure(error, false);
    }
  }

  private async verifyIdToken(
    config: oidc.Configuration,
    idToken: string | undefined,
    nonce: string,
  ): Promise<JWTPayload> {
    const metadata = config.serverMetadata();
    if (!idToken || !metadata.jwks_uri)
      throw new OAuthFailure('invalid_id_token', 502, 'The provider returned no verifiable ID token.');
    this.jwks ??= createRemoteJWKSet(new URL(metadata.jwks_uri));
    try {
      const { payload } = await jwtVerify(idToken, this.jwks, {
        issuer: metadata.issuer,
        audience: this.options.clientId,
      });
      if (payload.nonce !== nonce) throw new Error('nonce mismatch');
      return payload;
    } catch (error) {
      throw new OAuthFailure('invalid_id_token', 502, `The ID token did not verify (${describe(error)}).`);
    }
  }

  private tokenFailure(error: unknown, ambiguous: boolean): OAuthFailure {
    const code = getOAuthErrorCode(error);
    if (code === 'invalid_grant') {
      return ambiguous
        ? new OAuthFailure(
            'code_consumed',
            400,
            'The code was spent by an earlier attempt whose answer was lost: start the login again.',
            code,
          )
        : new OAuthFailure(
            'invalid_grant',
            400,
            'The provider refused the code (expired, replayed or not issued for this login).',
            code,
          );
    }
    if (code === 'invalid_client' || code === 'unauthorized_client') {
      return new OAuthFailure(
        'invalid_client',
        502,
        'The provider refused this client: check its configuration.',
        code,
      );
    }
    if (code !== undefined && !handleTransientTokenFailure({ outcome: { ok: false, error } })) {
      return new OAuthFailure('token_request_rejected', 400, `The provider refused the token request (${code}).`, code);
    }
    if (isBrokenCircuitError(error)) {
      return new OAuthFailure(
        'token_endpoint_unavailable',
        503,
        'The provider is unavailable.',
        undefined,
        error.retryAfter,
      );
    }
    const retryAfter =
      getHttpRetryAfter(error, Date.now()) ?? getHttpRetryAfter((error as { cause?: unknown }).cause, Date.now());
    const reason = isTimeoutRejectedError(error) ? 'timed out' : 'failed';
    return new OAuthFailure(
      'token_endpoint_unavailable',
      503,
      `The token request ${reason}; try again.`,
      undefined,
      retryAfter,
    );
  }
}

/**
 * Holds a token response while it travels through the pipeline, so telemetry listeners and loggers
 * that see outcomes never see tokens: it serialises and prints as `[redacted]`.
 *
 * @internal
 */
export class Redacted<T> {
  readonly #value: T;

  constructor(value: T) {
    this.#value = value;
  }

  reveal(): T {
    return this.#value;
  }

  toJSON(): string {
    return '[redacted]';
  }

  toString(): string {
    return '[redacted]';
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return '[redacted]';
  }
}

/** Checks the options; `plain` PKCE fails at start-up. @internal */
export function validateOAuthClientOptions(o: OAuthClientOptions): void {
  const v = new OptionsValidator('oauth');
  v.required('issuer', o.issuer);
  v.required('clientId', o.clientId);
  v.required('redirectUri', o.redirectUri);
  v.string('issuer', o.issuer)
    .string('clientId', o.clientId)
    .string('redirectUri', o.redirectUri)
    .string('clientSecret', o.clientSecret);
  if (o.pkceMethod !== undefined && o.pkceMethod !== 'S256') {
    v.add('pkceMethod', o.pkceMethod, 'must be "S256": plain PKCE is refused (RFC 7636 §7.2, RFC 9700 §2.1.1)');
  }
  for (const [name, value] of [
    ['issuer', o.issuer],
    ['redirectUri', o.redirectUri],
    ['tokenEndpoint', o.tokenEndpoint],
    ['endpoints.authorization', o.endpoints?.authorization],
    ['endpoints.token', o.endpoints?.token],
    ['endpoints.jwks', o.endpoints?.jwks],
  ] as const) {
    if (typeof value !== 'string') continue;
    try {
      const url = new URL(value);
      if (url.protocol !== 'https:' && !o.allowInsecureRequests)
        v.add(name, value, 'must be https (or set allowInsecureRequests for loopback development)');
    } catch {
      v.add(name, value, 'must be an absolute URL');
    }
  }
  v.duration('pendingTtl', o.pendingTtl, { min: 1_000 });
  v.throwIfInvalid('Invalid OAuth client options');
}

/** A same-site path (`/…`, not `//…` nor a URL): anything else could redirect the user elsewhere. */
function safeReturnTo(returnTo: string | undefined): string {
  if (returnTo === undefined || returnTo === '') return '/';
  if (
    returnTo.length > 2_048 ||
    !returnTo.startsWith('/') ||
    returnTo.startsWith('//') ||
    returnTo.startsWith('/\\') ||
    /[\r\n\t]/.test(returnTo)
  ) {
    throw new OAuthFailure('invalid_return_to', 400, 'The return path must be a path of this site.');
  }
  return returnTo;
}

function digest(value: string): string {
  return createHash('sha256').update(value).digest('base64url');
}

function sameDigest(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

function sanitize(value: string): string {
  return value.replace(/[^\x20-\x7e]/g, '').slice(0, 100);
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function toTokens(response: oidc.TokenEndpointResponse, now: number, previousRefreshToken?: string): OAuthTokens {
  return {
    accessToken: response.access_token,
    refreshToken: response.refresh_token ?? previousRefreshToken,
    idToken: response.id_token,
    expiresAt: typeof response.expires_in === 'number' ? now + response.expires_in * 1_000 : undefined,
    scope: response.scope,
  };
}
