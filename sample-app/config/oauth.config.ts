import { Module } from '@nestjs/common';
import { OptionsValidator } from '../../src/core.entry.js';
import type { ClientAuthenticationMethod, ClientPrivateJwk } from '../../src/oauth/index.js';

/**
 * The sample's sign-in settings, every one from an environment variable with a default (the table in
 * docs/oauth.md). Without `OIDC_ISSUER` the sample starts its own identity provider on loopback and
 * uses its demo client.
 */
export interface SampleOAuthConfig {
  /** `OIDC_ISSUER`; undefined = the built-in provider. */
  readonly issuer: string | undefined;
  /** `OIDC_CLIENT_ID` (default: the built-in provider's demo client). */
  readonly clientId: string | undefined;
  /** `OIDC_CLIENT_SECRET`. */
  readonly clientSecret: string | undefined;
  /** `OIDC_CLIENT_AUTH_METHOD`: `client_secret_basic` (default with a secret), `client_secret_post`, `private_key_jwt`, `none`. */
  readonly clientAuthentication: ClientAuthenticationMethod | undefined;
  /** `OIDC_CLIENT_PRIVATE_KEY`: a private JWK (JSON) or a PKCS#8 PEM, for `private_key_jwt`. */
  readonly clientPrivateKey: ClientPrivateJwk | string | undefined;
  /** `OIDC_CLIENT_KEY_ID`: the `kid` of that key. */
  readonly clientPrivateKeyId: string | undefined;
  /** `OIDC_REDIRECT_URI` (default `${APP_URL}/auth/callback`). */
  readonly redirectUri: string;
  /** `OIDC_POST_LOGOUT_REDIRECT_URI` (default `${APP_URL}/auth/me`). */
  readonly postLogoutRedirectUri: string;
  /** `OIDC_LOGOUT_ID_TOKEN_HINT=true` puts the ID token into the logout URL (default false). */
  readonly logoutWithIdTokenHint: boolean;
  /** `OIDC_SCOPES`, space-separated (default `openid offline_access`). */
  readonly scopes: string[];
  /** `OIDC_PKCE_METHOD` (default `S256`; anything else fails the start). */
  readonly pkceMethod: string;
  /** `OIDC_ALLOW_HTTP=true` allows a plain-http issuer (default false; always true for the built-in one). */
  readonly allowHttp: boolean;
  /** `OIDC_TOKEN_ENDPOINT`: replaces the discovered token endpoint (e.g. a gateway). */
  readonly tokenEndpoint: string | undefined;
  /** `OIDC_DEFER_DISCOVERY=true` discovers on the first login instead of at start-up (default false). */
  readonly deferDiscovery: boolean;
  /** `OIDC_PENDING_TTL_MS` (default 600000). */
  readonly pendingTtl: number;
  /** `OIDC_TOKEN_TIMEOUT_MS`, per request (default: `oauth.tokenRequests.attemptTimeout` of the resilience file). */
  readonly tokenTimeout: number | undefined;
  /** `OIDC_TOKEN_DEADLINE_MS`, for the whole exchange (default: the file's `deadline`). */
  readonly tokenDeadline: number | undefined;
  /** `OIDC_TOKEN_RETRIES` (default: the file's `retries`). */
  readonly tokenRetries: number | undefined;
  /** `OIDC_TOKEN_RETRY_DELAY_MS` (default: the file's `retryDelay`). */
  readonly tokenRetryDelay: number | undefined;
  /** `OIDC_BREAKER_THRESHOLD` (default: the file's `breakerThreshold`). */
  readonly breakerThreshold: number | undefined;
  /** `OIDC_BREAK_MS` (default: the file's `breakDuration`). */
  readonly breakDuration: number | undefined;
  /** `OIDC_PENDING_PER_ADDRESS`: logins waiting per client address (default 50; 0 = no cap). */
  readonly pendingPerAddress: number | undefined;
  /** `OIDC_PENDING_TOTAL`: logins waiting overall (default 50000; 0 = no cap). */
  readonly pendingTotal: number | undefined;
  /** `REDIS_URL`: the ResilienceModule store, the pending logins and the sessions in Redis (default: memory). */
  readonly redisUrl: string | undefined;
  /** `REDIS_KEY_PREFIX` (default `nest-resilience-sample`). */
  readonly redisKeyPrefix: string;
  /**
   * The session cookie's name: `nr_session` with `REDIS_URL` (one session for every instance), else
   * `nr_session_<port of APP_URL>` — cookies ignore ports, so instances with their own memory must not
   * share one (signing in on one would sign the user out of the other).
   */
  readonly sessionCookie: string;
}

export const SAMPLE_OAUTH_CONFIG = Symbol('SAMPLE_OAUTH_CONFIG');

/** Reads the settings; malformed values fail the start with one error naming every variable. */
export function oauthConfigFromEnv(env: NodeJS.ProcessEnv = process.env): SampleOAuthConfig {
  const v = new OptionsValidator('env');
  const text = (name: string) => (env[name] === undefined || env[name] === '' ? undefined : env[name]);
  const number = <F extends number | undefined>(name: string, fallback: F, rule: { min: number }): number | F => {
    const raw = text(name);
    if (raw === undefined) return fallback;
    const value = Number(raw);
    if (!/^\d+$/.test(raw.trim()) || value < rule.min) {
      v.add(name, raw, `must be a whole number >= ${rule.min}`);
      return fallback;
    }
    return value;
  };
  const flag = (name: string) => {
    const raw = text(name);
    if (raw === undefined) return false;
    if (raw !== 'true' && raw !== 'false') v.add(name, raw, 'must be "true" or "false"');
    return raw === 'true';
  };
  const appUrl = text('APP_URL') ?? `http://127.0.0.1:${text('PORT') ?? 3000}`;
  const rawKey = text('OIDC_CLIENT_PRIVATE_KEY');
  let clientPrivateKey: ClientPrivateJwk | string | undefined = rawKey;
  if (rawKey?.trim().startsWith('{')) {
    try {
      clientPrivateKey = JSON.parse(rawKey) as ClientPrivateJwk;
    } catch {
      v.add('OIDC_CLIENT_PRIVATE_KEY', '[redacted]', 'must be a JWK in JSON or a PKCS#8 PEM');
    }
  }
  const issuer = text('OIDC_ISSUER');
  if (issuer !== undefined && text('OIDC_CLIENT_ID') === undefined) {
    v.add('OIDC_CLIENT_ID', undefined, 'is required with OIDC_ISSUER');
  }
  const config: SampleOAuthConfig = {
    issuer,
    clientId: text('OIDC_CLIENT_ID'),
    clientSecret: text('OIDC_CLIENT_SECRET'),
    clientAuthentication: text('OIDC_CLIENT_AUTH_METHOD') as ClientAuthenticationMethod | undefined,
    clientPrivateKey,
    clientPrivateKeyId: text('OIDC_CLIENT_KEY_ID'),
    redirectUri: text('OIDC_REDIRECT_URI') ?? `${appUrl}/auth/callback`,
    postLogoutRedirectUri: text('OIDC_POST_LOGOUT_REDIRECT_URI') ?? `${appUrl}/auth/me`,
    logoutWithIdTokenHint: flag('OIDC_LOGOUT_ID_TOKEN_HINT'),
    scopes: (text('OIDC_SCOPES') ?? 'openid offline_access').split(/\s+/).filter(Boolean),
    pkceMethod: text('OIDC_PKCE_METHOD') ?? 'S256',
    allowHttp: flag('OIDC_ALLOW_HTTP'),
    tokenEndpoint: text('OIDC_TOKEN_ENDPOINT'),
    deferDiscovery: flag('OIDC_DEFER_DISCOVERY'),
    pendingTtl: number('OIDC_PENDING_TTL_MS', 600_000, { min: 1_000 }),
    tokenTimeout: number('OIDC_TOKEN_TIMEOUT_MS', undefined, { min: 1 }),
    tokenDeadline: number('OIDC_TOKEN_DEADLINE_MS', undefined, { min: 1 }),
    tokenRetries: number('OIDC_TOKEN_RETRIES', undefined, { min: 0 }),
    tokenRetryDelay: number('OIDC_TOKEN_RETRY_DELAY_MS', undefined, { min: 0 }),
    breakerThreshold: number('OIDC_BREAKER_THRESHOLD', undefined, { min: 1 }),
    breakDuration: number('OIDC_BREAK_MS', undefined, { min: 1 }),
    pendingPerAddress: number('OIDC_PENDING_PER_ADDRESS', undefined, { min: 0 }),
    pendingTotal: number('OIDC_PENDING_TOTAL', undefined, { min: 0 }),
    redisUrl: text('REDIS_URL'),
    sessionCookie: text('REDIS_URL') ? 'nr_session' : `nr_session_${portOf(appUrl)}`,
    redisKeyPrefix: text('REDIS_KEY_PREFIX') ?? 'nest-resilience-sample',
  };
  v.throwIfInvalid('Invalid sample settings');
  return config;
}

@Module({
  providers: [{ provide: SAMPLE_OAUTH_CONFIG, useFactory: () => oauthConfigFromEnv() }],
  exports: [SAMPLE_OAUTH_CONFIG],
})
export class SampleOAuthConfigModule {}

/** The port of a URL, the scheme's default when it names none ('' for an unusable URL). */
function portOf(url: string): string {
  try {
    const parsed = new URL(url);
    return parsed.port || (parsed.protocol === 'https:' ? '443' : '80');
  } catch {
    return '';
  }
}
