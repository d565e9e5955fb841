import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import * as oidc from 'openid-client';
import type { JWTPayload } from 'jose';
import {
  ResilienceProperties,
  ResilienceValidationError,
  systemTimeProvider,
  type ResiliencePipeline,
  type TimeProvider,
} from '../core/index.js';
import { parseCallbackParameters } from './callback-parameters.validator.js';
import { IdTokenVerifier } from './id-token.verifier.js';
import { loadProviderConfiguration, mapDiscoveryFailure } from './provider-discovery.loader.js';
import {
  effectiveAuthenticationMethod,
  validateOAuthClientOptions,
  type CompletedLogin,
  type OAuthClientOptions,
  type OAuthTokens,
  type StartedLogin,
} from './oauth-client.options.js';
import { OAuthEventLogger, OAuthLogCode } from './oauth-events.logger.js';
import { failureClass, getTokenHttpStatus, getTokenRetryAfter, mapTokenFailure } from './oauth-failure.mapper.js';
import { Redacted } from './oauth-secret.redaction.js';
import { OAuthFailure } from './oauth.errors.js';
import {
  InMemoryPendingAuthorizationStore,
  PendingLoginLimitError,
  type PendingAuthorization,
  type PendingAuthorizationStore,
  type PendingLoginLimits,
} from './pending-authorization.store.js';
import { calculateCodeChallenge, generateCodeVerifier, generateOpaqueToken } from './pkce.helper.js';
import { withAttemptSignal } from './attempt-signal.js';
import { defaultTokenPipeline, OAUTH_CORRELATION_ID, OAUTH_SPENDS_GRANT } from './token-endpoint.pipeline.js';
import {
  getOAuthErrorCode,
  handleTransientTokenFailure,
  isAmbiguousTokenFailure,
} from './token-endpoint.predicates.js';

/** A browser-binding cookie value this client issued: 32 random octets, base64url. */
const BINDING_PATTERN = /^[A-Za-z0-9_-]{43}$/;

/**
 * An OAuth 2.0 / OpenID Connect client for the authorization-code flow with PKCE, hardened to RFC 9700:
 * S256 only, 256-bit state and nonce, state single-use and bound to the browser, `iss` checked (RFC 9207),
 * ID token signature and claims verified with `jose`, exactly one token request per state, refresh
 * single-flight per session. Protocol work is done by `openid-client`; every request to the provider runs
 * through a resilience pipeline; every event is logged with a stable code and a correlation id.
 *
 * @publicApi
 */
export class OAuthClient {
  private readonly pipeline: ResiliencePipeline<unknown>;
  private readonly store: PendingAuthorizationStore;
  private readonly time: TimeProvider;
  private readonly events: OAuthEventLogger;
  private configuration: Promise<oidc.Configuration> | undefined;
  private readonly idTokens: IdTokenVerifier;
  private readonly refreshing = new Map<string, Promise<OAuthTokens>>();
  private readonly ownPipeline: boolean;
  private readonly limits: PendingLoginLimits;

  constructor(private readonly options: OAuthClientOptions) {
    validateOAuthClientOptions(options);
    this.time = options.timeProvider ?? systemTimeProvider;
    this.events = new OAuthEventLogger(options.logger, this.time, options.logBurstWindow);
    // The default pipeline reports every retried attempt (timeouts included); with a pipeline of the
    // application's, attempts are reported as the callback sees them.
    this.ownPipeline = options.pipeline === undefined;
    this.pipeline =
      options.pipeline ??
      defaultTokenPipeline(options.tokenRequests, this.time, ({ error, attemptNumber, retryDelay, correlationId }) =>
        this.logAttemptFailure(error, correlationId, attemptNumber, retryDelay),
      );
    this.store = options.pendingStore ?? new InMemoryPendingAuthorizationStore(this.time);
    this.idTokens = new IdTokenVerifier(options.clientId);
    this.limits = {
      perAddress: options.pendingLimits?.perAddress ?? 50,
      total: options.pendingLimits?.total ?? 50_000,
    };
  }

  /**
   * Discovers the provider now and checks that it fits: its issuer, S256, the client authentication
   * method. Meant for start-up; throws an error an operator can act on (with the details).
   */
  async init(): Promise<void> {
    try {
      await this.discover();
    } catch (error) {
      if (error instanceof OAuthFailure) {
        const cause = (error as { cause?: unknown }).cause;
        if (cause instanceof ResilienceValidationError) throw cause;
        throw new OAuthFailure(error.code, error.status, `${error.message} ${error.detail ?? ''}`.trim());
      }
      throw error;
    }
  }

  /** The provider's metadata, discovered once (through the pipeline) and kept; a failure is tried again next time. */
  discover(): Promise<oidc.Configuration> {
    this.configuration ??= loadProviderConfiguration(this.options, this.pipeline).then(
      (config) => {
        this.events.event('log', OAuthLogCode.DiscoveryCompleted, 'provider metadata read', {
          issuer: config.serverMetadata().issuer,
          clientAuthentication: effectiveAuthenticationMethod(this.options),
        });
        return config;
      },
      (error: unknown) => {
        this.configuration = undefined; // the next call tries again
        const failure = mapDiscoveryFailure(error, this.options.issuer, this.time.now());
        this.events.once('error', OAuthLogCode.DiscoveryFailed, `discovery:${failure.code}`, failure.message, {
          code: failure.code,
          detail: failure.detail,
          issuer: this.options.issuer,
        });
        throw failure;
      },
    );
    return this.configuration;
  }

  /**
   * Starts a login: the URL to send the browser to, and the binding to set as an HttpOnly cookie. Given
   * the binding the browser already has (`browserBinding`, its cookie), the new login replaces the one
   * waiting for it, so a browser never holds more than one. Given the `clientAddress`, at most
   * `pendingLimits.perAddress` logins wait for it (429 `too_many_logins` past it); overall at most
   * `pendingLimits.total` (503 `login_capacity`). A store that cannot be reached gives 503
   * `store_unavailable`, logged once per burst: the login is never kept anywhere else.
   */
  async startLogin(
    options: { returnTo?: string; correlationId?: string; browserBinding?: string; clientAddress?: string } = {},
  ): Promise<StartedLogin> {
    const correlationId = options.correlationId ?? newCorrelationId();
    let returnTo: string;
    try {
      returnTo = safeReturnTo(options.returnTo);
    } catch (error) {
      this.events.event('warn', OAuthLogCode.LoginRejected, 'login refused', {
        reason: (error as OAuthFailure).code,
        correlationId,
      });
      throw error;
    }
    const config = await this.discover();
    const codeVerifier = generateCodeVerifier();
    const state = generateOpaqueToken();
    const nonce = generateOpaqueToken();
    const browserBinding =
      options.browserBinding !== undefined && BINDING_PATTERN.test(options.browserBinding)
        ? options.browserBinding
        : generateOpaqueToken();
    const entry: PendingAuthorization = {
      codeVerifier,
      nonce,
      issuer: config.serverMetadata().issuer,
      redirectUri: this.options.redirectUri,
      returnTo,
      browserBinding: digest(browserBinding),
      createdAt: this.time.now(),
      correlationId,
      ...(options.clientAddress ? { clientAddress: digest(`address:${options.clientAddress}`) } : {}),
    };
    try {
      await this.store.save(state, entry, this.options.pendingTtl ?? 600_000, this.limits);
    } catch (error) {
      throw this.storeFailure(error, correlationId);
    }
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: this.options.redirectUri,
      scope: (this.options.scopes ?? ['openid']).join(' '),
      code_challenge: calculateCodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
      state,
      nonce,
    });
    this.events.event('log', OAuthLogCode.LoginStarted, 'login started', { correlationId, returnTo });
    return { authorizationUrl: url.href, state, browserBinding, correlationId };
  }

  /**
   * Finishes a login from the callback's query string and the browser's binding cookie. Every check
   * happens before the token request; a failed check makes no token request. The pending entry is taken
   * (once, atomically) before anything else about the provider is trusted.
   */
  async completeLogin(callback: {
    query: string | URLSearchParams;
    browserBinding: string | undefined;
    /** Names this callback in log lines until the login it belongs to is known (e.g. a request id). */
    correlationId?: string;
  }): Promise<CompletedLogin> {
    const params = typeof callback.query === 'string' ? new URLSearchParams(callback.query) : callback.query;
    let correlationId = callback.correlationId ?? newCorrelationId();
    let parsed: ReturnType<typeof parseCallbackParameters>;
    let pending: NonNullable<Awaited<ReturnType<PendingAuthorizationStore['take']>>> | undefined;
    let config: oidc.Configuration;
    try {
      parsed = parseCallbackParameters(params);
      try {
        pending = await this.store.take(parsed.state);
      } catch (error) {
        throw this.storeFailure(error, correlationId);
      }
      if (!pending) {
        throw new OAuthFailure('unknown_state', 400, 'The login is unknown, expired or already completed.');
      }
      correlationId = pending.correlationId ?? correlationId;
      if (!callback.browserBinding || !sameDigest(digest(callback.browserBinding), pending.browserBinding)) {
        throw new OAuthFailure('browser_mismatch', 400, 'The login was started in another browser.');
      }
      config = await this.discover();
      if (parsed.iss !== null && parsed.iss !== pending.issuer) {
        throw new OAuthFailure('issuer_mismatch', 400, 'The callback comes from another issuer.');
      }
      if (parsed.iss === null && config.serverMetadata().authorization_response_iss_parameter_supported) {
        throw new OAuthFailure('missing_issuer', 400, 'The callback has no iss although the provider sends one.');
      }
      if (parsed.error !== null) {
        this.events.event('warn', OAuthLogCode.ProviderError, 'the provider refused the login', {
          correlationId,
          error: parsed.error,
          description: parsed.errorDescription,
        });
        throw new OAuthFailure(
          'provider_error',
          400,
          `The provider refused the login (${parsed.error}).`,
          parsed.error,
          undefined,
          { providerErrorDescription: parsed.errorDescription },
        );
      }
      if (!parsed.code) throw new OAuthFailure('missing_code', 400, 'The callback has no code.');
    } catch (error) {
      if (error instanceof OAuthFailure && pending) error.returnTo ??= pending.returnTo ?? '/';
      if (
        error instanceof OAuthFailure &&
        error.code !== 'discovery_failed' &&
        error.code !== 'provider_mismatch' &&
        error.code !== 'store_unavailable'
      ) {
        this.events.event('warn', OAuthLogCode.CallbackRejected, 'callback rejected', {
          correlationId,
          reason: error.code,
          check: error.check,
        });
      }
      throw error;
    }

    const verifier = pending.codeVerifier;
    const nonce = pending.nonce;
    const currentUrl = new URL(pending.redirectUri);
    currentUrl.search = params.toString();
    const returnTo = pending.returnTo ?? '/';
    let ambiguous = false;
    const guard = new SingleRetryAfterAmbiguousFailure();
    let response: oidc.TokenEndpointResponse;
    try {
      // The response travels through the pipeline boxed, so telemetry never sees the tokens.
      const boxed = await this.pipeline.execute(
        async (context) => {
          guard.beforeAttempt();
          try {
            return new Redacted(
              await withAttemptSignal(context.signal, () =>
                oidc.authorizationCodeGrant(config, currentUrl, {
                  pkceCodeVerifier: verifier,
                  expectedState: parsed.state,
                  expectedNonce: nonce,
                  idTokenExpected: true,
                }),
              ),
            );
          } catch (error) {
            guard.failed(error);
            if (handleTransientTokenFailure({ outcome: { ok: false, error } }) || isAmbiguousTokenFailure(error)) {
              ambiguous = true;
              if (!this.ownPipeline) this.logAttemptFailure(error, correlationId, context.attemptNumber);
            }
            throw error;
          }
        },
        { operationKey: 'oauth.token', properties: grantSpending(correlationId) },
      );
      response = boxed.reveal();
    } catch (error) {
      const failure = mapTokenFailure(error, ambiguous, this.time.now());
      failure.returnTo ??= returnTo;
      throw this.logTokenFailure(failure, error, correlationId);
    }
    let claims: JWTPayload;
    try {
      claims = await this.idTokens.verify(config, response.id_token, nonce);
    } catch (error) {
      (error as OAuthFailure).returnTo ??= returnTo;
      throw this.logTokenFailure(error as OAuthFailure, error, correlationId);
    }
    this.events.event('log', OAuthLogCode.LoginCompleted, 'login completed', { correlationId, returnTo });
    return { tokens: toTokens(response, this.time.now()), claims, returnTo, correlationId };
  }

  /**
   * Refreshes a session's tokens. Concurrent refreshes of one session share one request (the provider
   * rotates refresh tokens and revokes the chain on reuse). `invalid_grant` ends the session. An ID token
   * in the answer is verified as at sign-in (signature, `alg`, `iss`, `aud`, `exp`) and, given `subject`
   * (the signed-in user's `sub`), must name that user; otherwise the refresh fails with `invalid_id_token`
   * and no token is handed out.
   */
  refresh(
    sessionId: string,
    refreshToken: string,
    options: { correlationId?: string; subject?: string } = {},
  ): Promise<OAuthTokens> {
    let running = this.refreshing.get(sessionId);
    if (!running) {
      running = this.runRefresh(refreshToken, options.correlationId ?? newCorrelationId(), options.subject).finally(
        () => this.refreshing.delete(sessionId),
      );
      this.refreshing.set(sessionId, running);
    }
    return running;
  }

  /** The UserInfo claims for an access token, checked against the expected subject. */
  async userInfo(accessToken: string, expectedSubject: string): Promise<Record<string, unknown>> {
    const config = await this.discover();
    return this.pipeline.execute(
      (context) => withAttemptSignal(context.signal, () => oidc.fetchUserInfo(config, accessToken, expectedSubject)),
      { operationKey: 'oauth.userinfo' },
    );
  }

  /**
   * The provider's end-session URL (RP-initiated logout), when it has one: `client_id` and the
   * configured `post_logout_redirect_uri`, plus `logout_hint` when given. The ID token goes into the
   * URL (`id_token_hint`) only when `logoutWithIdTokenHint` is set.
   */
  async logoutUrl(
    options: { idToken?: string; logoutHint?: string; postLogoutRedirectUri?: string; correlationId?: string } = {},
  ): Promise<string | undefined> {
    const config = await this.discover();
    if (!config.serverMetadata().end_session_endpoint) return undefined;
    const params: Record<string, string> = { client_id: this.options.clientId };
    const postLogout = options.postLogoutRedirectUri ?? this.options.postLogoutRedirectUri;
    if (postLogout) params.post_logout_redirect_uri = postLogout;
    if (options.logoutHint) params.logout_hint = options.logoutHint;
    if (this.options.logoutWithIdTokenHint && options.idToken) params.id_token_hint = options.idToken;
    this.events.event('log', OAuthLogCode.LogoutStarted, 'logout at the provider', {
      correlationId: options.correlationId,
      idTokenHint: params.id_token_hint !== undefined,
    });
    return oidc.buildEndSessionUrl(config, params).href;
  }

  private async runRefresh(refreshToken: string, correlationId: string, subject?: string): Promise<OAuthTokens> {
    const config = await this.discover();
    let response: oidc.TokenEndpointResponse;
    const guard = new SingleRetryAfterAmbiguousFailure();
    try {
      const boxed = await this.pipeline.execute(
        async (context) => {
          guard.beforeAttempt();
          try {
            return new Redacted(
              await withAttemptSignal(context.signal, () => oidc.refreshTokenGrant(config, refreshToken)),
            );
          } catch (error) {
            guard.failed(error);
            if (!this.ownPipeline && handleTransientTokenFailure({ outcome: { ok: false, error } })) {
              this.logAttemptFailure(error, correlationId, context.attemptNumber);
            }
            throw error;
          }
        },
        { operationKey: 'oauth.refresh', properties: grantSpending(correlationId) },
      );
      response = boxed.reveal();
    } catch (error) {
      if (getOAuthErrorCode(error) === 'invalid_grant') {
        this.events.event('log', OAuthLogCode.SessionEnded, 'the provider no longer accepts the refresh token', {
          correlationId,
          reason: 'invalid_grant',
        });
        throw new OAuthFailure(
          'session_ended',
          401,
          'The session ended: the provider no longer accepts its refresh token.',
          'invalid_grant',
        );
      }
      const failure = mapTokenFailure(error, false, this.time.now());
      this.events.event('warn', OAuthLogCode.RefreshFailed, 'refresh failed', { correlationId, reason: failure.code });
      throw this.logTokenFailure(failure, error, correlationId);
    }
    // An ID token that comes with refreshed tokens is checked as at sign-in (signature, alg, iss, aud, exp)
    // and must name the same user; its tokens are never handed out otherwise.
    if (response.id_token !== undefined) {
      try {
        await this.idTokens.verify(config, response.id_token, undefined, subject);
      } catch (error) {
        const failure = error as OAuthFailure;
        this.events.event('warn', OAuthLogCode.RefreshFailed, 'refresh failed', {
          correlationId,
          reason: failure.code,
        });
        throw this.logTokenFailure(failure, error, correlationId);
      }
    }
    this.events.event('log', OAuthLogCode.RefreshRotated, 'tokens refreshed', {
      correlationId,
      rotated: response.refresh_token !== undefined && response.refresh_token !== refreshToken,
    });
    return toTokens(response, this.time.now(), refreshToken);
  }

  /**
   * A store that refused or failed to keep or hand back a pending login, as the user gets it: a cap
   * reached (429 / 503 with the time until a place frees up), or the store unavailable (503, logged at
   * error once per burst — nothing is kept elsewhere instead).
   */
  private storeFailure(error: unknown, correlationId: string): OAuthFailure {
    if (error instanceof OAuthFailure) return error;
    if (error instanceof PendingLoginLimitError) {
      const failure =
        error.limit === 'address'
          ? new OAuthFailure(
              'too_many_logins',
              429,
              'Too many sign-ins are waiting from this address; finish one or try again later.',
              undefined,
              error.retryAfter,
            )
          : new OAuthFailure(
              'login_capacity',
              503,
              'Too many sign-ins are waiting; try again later.',
              undefined,
              error.retryAfter,
            );
      this.events.once('warn', OAuthLogCode.LoginRejected, `limit:${error.limit}`, 'login refused', {
        reason: failure.code,
        correlationId,
      });
      return failure;
    }
    const retryAfter = (error as { retryAfter?: unknown } | null)?.retryAfter;
    this.events.once(
      'error',
      OAuthLogCode.StoreUnavailable,
      'store_unavailable',
      'the pending-login store is unavailable: logins are refused with 503 until it answers',
      { correlationId, error: error instanceof Error ? error.name : typeof error },
    );
    return new OAuthFailure(
      'store_unavailable',
      503,
      'Sign-in is unavailable right now; try again shortly.',
      undefined,
      typeof retryAfter === 'number' && retryAfter > 0 ? retryAfter : undefined,
    );
  }

  private logAttemptFailure(
    error: unknown,
    correlationId: string | undefined,
    attempt: number,
    retryDelay?: number,
  ): void {
    this.events.event('warn', OAuthLogCode.TokenEndpointFailure, 'request to the provider failed', {
      correlationId,
      attempt,
      retryInMs: retryDelay,
      class: failureClass(error),
      status: getTokenHttpStatus(error),
      retryAfterMs: getTokenRetryAfter(error, this.time.now()),
    });
  }

  /** Logs a failed exchange or refresh at its level, and gives the failure back. */
  private logTokenFailure(failure: OAuthFailure, error: unknown, correlationId: string): OAuthFailure {
    const fields = { correlationId, reason: failure.code, providerError: failure.providerError };
    switch (failure.code) {
      case 'invalid_client':
        this.events.once(
          'error',
          OAuthLogCode.InvalidClient,
          'invalid_client',
          'the provider refused this client: fix its id, secret, key or authentication method',
          {
            ...fields,
            clientAuthentication: effectiveAuthenticationMethod(this.options),
            status: getTokenHttpStatus(error),
          },
        );
        break;
      case 'invalid_id_token':
        this.events.event('warn', OAuthLogCode.IdTokenRejected, 'security: ID token rejected, no session', {
          ...fields,
          check: failure.check,
        });
        break;
      case 'invalid_token_response':
        this.events.event('warn', OAuthLogCode.TokenResponseInvalid, 'security: token response rejected, no session', {
          ...fields,
          check: failure.check,
        });
        break;
      case 'token_endpoint_unavailable':
      case 'discovery_failed':
        this.events.event('warn', OAuthLogCode.TokenEndpointFailure, 'token request given up', {
          ...fields,
          class: failureClass(error),
          retryAfterMs: failure.retryAfter,
        });
        break;
      default:
        this.events.event('warn', OAuthLogCode.TokenRequestRejected, 'token request refused', fields);
    }
    return failure;
  }
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

/** The properties of a code exchange or refresh: its correlation id, and that it spends a grant. */
function grantSpending(correlationId: string): ResilienceProperties {
  return new ResilienceProperties().set(OAUTH_CORRELATION_ID, correlationId).set(OAUTH_SPENDS_GRANT, true);
}

/**
 * Holds a code exchange or refresh to one request after an ambiguous failure, whatever pipeline runs it:
 * an attempt past that one makes no request and fails again with the failure that ended the last one.
 */
class SingleRetryAfterAmbiguousFailure {
  private ambiguousSeen = false;
  private retriedAfterAmbiguous = false;
  private last: unknown;

  beforeAttempt(): void {
    if (!this.ambiguousSeen) return;
    if (this.retriedAfterAmbiguous) {
      throw this.last;
    }
    this.retriedAfterAmbiguous = true;
  }

  failed(error: unknown): void {
    this.last = error;
    if (isAmbiguousTokenFailure(error)) this.ambiguousSeen = true;
  }
}

function newCorrelationId(): string {
  return randomBytes(8).toString('hex');
}

function digest(value: string): string {
  return createHash('sha256').update(value).digest('base64url');
}

function sameDigest(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
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
