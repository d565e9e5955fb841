import { systemTimeProvider, type TimeProvider } from '../core/index.js';

/**
 * What a login started on one request (or instance) leaves for its callback: everything needed to
 * finish it, and the browser it is bound to.
 *
 * @publicApi
 */
export interface PendingAuthorization {
  /** The PKCE code verifier sent with the token request (RFC 7636 §4.5). */
  readonly codeVerifier: string;
  /** The nonce the ID token must carry. */
  readonly nonce: string;
  /** The issuer the authorization request went to (checked against `iss`, RFC 9207). */
  readonly issuer: string;
  /** The redirect URI of the authorization request, sent again with the token request. */
  readonly redirectUri: string;
  /** Where to send the user once signed in (validated as same-site before it was stored). */
  readonly returnTo?: string;
  /** A hash of the browser-binding cookie: the callback must come from the browser that started. */
  readonly browserBinding: string;
  /** Milliseconds since the epoch. */
  readonly createdAt: number;
  /** Names the login in log lines (not a secret). */
  readonly correlationId?: string;
}

/**
 * Where pending authorizations wait for their callback, keyed by `state`. `take` is atomic and
 * single-use: of any number of concurrent callbacks with one `state` — on any number of instances — at
 * most one gets the entry, so exactly one token request is ever made per `state`.
 *
 * @publicApi
 */
export interface PendingAuthorizationStore {
  /** Stores an entry for `ttl` milliseconds. */
  save(state: string, entry: PendingAuthorization, ttl: number): Promise<void>;
  /** Removes and returns the entry, or `undefined` when it is unknown, expired or already taken. */
  take(state: string): Promise<PendingAuthorization | undefined>;
}

/**
 * The default store: this process's memory, with expiry through the clock. Expired entries are dropped
 * as they are met and swept every 256 saves, so abandoned logins do not accumulate.
 *
 * @publicApi
 */
export class InMemoryPendingAuthorizationStore implements PendingAuthorizationStore {
  private readonly entries = new Map<string, { entry: PendingAuthorization; expiresAt: number }>();
  private saves = 0;

  constructor(private readonly time: TimeProvider = systemTimeProvider) {}

  /** Entries held (expired ones included until swept). */
  get size(): number {
    return this.entries.size;
  }

  save(state: string, entry: PendingAuthorization, ttl: number): Promise<void> {
    const now = this.time.now();
    this.entries.set(state, { entry, expiresAt: now + ttl });
    if (++this.saves % 256 === 0) {
      for (const [key, value] of this.entries) if (value.expiresAt <= now) this.entries.delete(key);
    }
    return Promise.resolve();
  }

  take(state: string): Promise<PendingAuthorization | undefined> {
    const found = this.entries.get(state);
    this.entries.delete(state);
    return Promise.resolve(found && found.expiresAt > this.time.now() ? found.entry : undefined);
  }
}
