import type { TimeProvider } from '../core/index.js';

/** Something that logs (Nest's `Logger`, `console`, pino…). @publicApi */
export interface OAuthLogger {
  /** Failures only an operator can fix (bad credentials, wrong issuer). */
  error(message: string): void;
  /** Rejected callbacks and tokens (security events). */
  warn(message: string): void;
  /** Completed logins, refreshes and logouts. */
  log?(message: string): void;
  /** Detail for troubleshooting. */
  debug?(message: string): void;
}

/**
 * The stable codes of the OAuth client's log lines. Every line starts with its code and carries
 * `correlationId=…`; none ever carries a verifier, code, token, client secret, cookie value or
 * `Authorization` header.
 *
 * @publicApi
 */
export const OAuthLogCode = {
  DiscoveryCompleted: 'OAUTH_DISCOVERY_COMPLETED',
  DiscoveryFailed: 'OAUTH_DISCOVERY_FAILED',
  LoginStarted: 'OAUTH_LOGIN_STARTED',
  LoginRejected: 'OAUTH_LOGIN_REJECTED',
  LoginCompleted: 'OAUTH_LOGIN_COMPLETED',
  CallbackRejected: 'OAUTH_CALLBACK_REJECTED',
  ProviderError: 'OAUTH_PROVIDER_ERROR',
  TokenRequestRejected: 'OAUTH_TOKEN_REQUEST_REJECTED',
  TokenEndpointFailure: 'OAUTH_TOKEN_ENDPOINT_FAILURE',
  InvalidClient: 'OAUTH_INVALID_CLIENT',
  IdTokenRejected: 'OAUTH_ID_TOKEN_REJECTED',
  TokenResponseInvalid: 'OAUTH_TOKEN_RESPONSE_INVALID',
  RefreshRotated: 'OAUTH_REFRESH_ROTATED',
  RefreshFailed: 'OAUTH_REFRESH_FAILED',
  SessionEnded: 'OAUTH_SESSION_ENDED',
  LogoutStarted: 'OAUTH_LOGOUT_STARTED',
  StoreUnavailable: 'OAUTH_STORE_UNAVAILABLE',
} as const;

/** One of the stable codes of `OAuthLogCode`. @publicApi */
export type OAuthLogCode = (typeof OAuthLogCode)[keyof typeof OAuthLogCode];

type Level = 'error' | 'warn' | 'log' | 'debug';
type Fields = Record<string, string | number | boolean | undefined>;

/** A field value as it may appear in a log line: printable ASCII, no spaces or quotes, bounded. */
function field(value: string | number | boolean): string {
  const text = String(value)
    .replace(/[^\x21-\x7e]/g, '_')
    .replace(/["\\]/g, '_');
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

/**
 * Writes the client's events as single lines `CODE message key=value …`, and collapses bursts of
 * operator-only failures (one line per `burstWindow`, the next one saying how many were suppressed).
 *
 * @internal
 */
export class OAuthEventLogger {
  private readonly bursts = new Map<string, { since: number; suppressed: number }>();

  constructor(
    private readonly logger: OAuthLogger | undefined,
    private readonly time: TimeProvider,
    private readonly burstWindow = 60_000,
  ) {}

  event(level: Level, code: OAuthLogCode, message: string, fields: Fields = {}): void {
    const logger = this.logger;
    if (!logger) return;
    const parts = [code, message];
    for (const [key, value] of Object.entries(fields)) if (value !== undefined) parts.push(`${key}=${field(value)}`);
    const line = parts.join(' ');
    if (level === 'error') logger.error(line);
    else if (level === 'warn') logger.warn(line);
    else if (level === 'log') (logger.log ?? logger.warn).call(logger, line);
    else logger.debug?.(line);
  }

  /** Like `event`, but at most once per burst window for one `burstKey`. */
  once(level: Level, code: OAuthLogCode, burstKey: string, message: string, fields: Fields = {}): void {
    const now = this.time.now();
    const burst = this.bursts.get(burstKey);
    if (burst && now - burst.since < this.burstWindow) {
      burst.suppressed++;
      return;
    }
    this.bursts.set(burstKey, { since: now, suppressed: 0 });
    this.event(level, code, message, { ...fields, suppressedSinceLast: burst?.suppressed || undefined });
  }
}
