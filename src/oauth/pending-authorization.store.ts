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
  /** A hash of the client address the login was started from, when known (for the per-address cap). */
  readonly clientAddress?: string;
}

/**
 * How many logins may wait at once: `perAddress` from one client address (its hash, `clientAddress`) and
 * `total` overall. A browser has one at most: a login saved with the `browserBinding` of a waiting one
 * replaces it. 0 = no cap.
 *
 * @publicApi
 */
export interface PendingLoginLimits {
  /** Waiting logins per client address. */
  readonly perAddress: number;
  /** Waiting logins overall. */
  readonly total: number;
}

/**
 * A login the store refused to keep because a cap is reached (`limit`): `retryAfter` ms until the oldest
 * login counted against it expires, when known.
 *
 * @publicApi
 */
export class PendingLoginLimitError extends Error {
  constructor(
    /** `address`: too many from one client address; `total`: too many overall. */
    readonly limit: 'address' | 'total',
    /** Milliseconds until a place frees up, when known. */
    readonly retryAfter?: number,
  ) {
    super(limit === 'address' ? 'too many pending logins from one address' : 'too many pending logins');
    this.name = 'PendingLoginLimitError';
  }
}

/**
 * Where pending authorizations wait for their callback, keyed by `state`. `take` is atomic and
 * single-use: of any number of concurrent callbacks with one `state` — on any number of instances — at
 * most one gets the entry, so exactly one token request is ever made per `state`. `save` keeps one entry
 * per `browserBinding` (a new one replaces the previous one) and, given `limits`, refuses with
 * `PendingLoginLimitError` past them. Any other error means the store cannot be used right now (the
 * client answers 503 `store_unavailable`, with the error's `retryAfter` when it has one).
 *
 * @publicApi
 */
export interface PendingAuthorizationStore {
  /** Stores an entry for `ttl` milliseconds, replacing the one of the same `browserBinding`, within `limits`. */
  save(state: string, entry: PendingAuthorization, ttl: number, limits?: PendingLoginLimits): Promise<void>;
  /** Removes and returns the entry, or `undefined` when it is unknown, expired or already taken. */
  take(state: string): Promise<PendingAuthorization | undefined>;
}

interface Held {
  readonly entry: PendingAuthorization;
  readonly expiresAt: number;
}

/**
 * The default store: this process's memory, with expiry through the clock, one entry per browser binding
 * and the caps of `limits`. Expired entries are dropped as they are met and swept every 256 saves (and
 * before the overall cap refuses), so abandoned logins do not accumulate.
 *
 * @publicApi
 */
export class InMemoryPendingAuthorizationStore implements PendingAuthorizationStore {
  private readonly entries = new Map<string, Held>();
  private readonly byBinding = new Map<string, string>();
  private readonly byAddress = new Map<string, Set<string>>();
  private saves = 0;

  constructor(private readonly time: TimeProvider = systemTimeProvider) {}

  /** Entries held (expired ones included until swept). */
  get size(): number {
    return this.entries.size;
  }

  save(state: string, entry: PendingAuthorization, ttl: number, limits?: PendingLoginLimits): Promise<void> {
    const now = this.time.now();
    if (++this.saves % 256 === 0) this.sweep(now);
    const previous = this.byBinding.get(entry.browserBinding);
    if (previous !== undefined) this.remove(previous);
    const address = entry.clientAddress;
    if (address !== undefined && limits && limits.perAddress > 0) {
      const states = this.byAddress.get(address);
      if (states) for (const s of states) if (!this.live(s, now)) this.remove(s);
      const held = this.byAddress.get(address);
      if (held && held.size >= limits.perAddress) {
        return Promise.reject(new PendingLoginLimitError('address', this.untilFirstExpiry(held, now)));
      }
    }
    if (limits && limits.total > 0 && this.entries.size >= limits.total) {
      this.sweep(now);
      if (this.entries.size >= limits.total) {
        return Promise.reject(new PendingLoginLimitError('total', this.untilFirstExpiry(this.entries.keys(), now)));
      }
    }
    this.entries.set(state, { entry, expiresAt: now + ttl });
    this.byBinding.set(entry.browserBinding, state);
    if (address !== undefined) {
      let states = this.byAddress.get(address);
      if (!states) this.byAddress.set(address, (states = new Set()));
      states.add(state);
    }
    return Promise.resolve();
  }

  take(state: string): Promise<PendingAuthorization | undefined> {
    const found = this.entries.get(state);
    this.remove(state);
    return Promise.resolve(found && found.expiresAt > this.time.now() ? found.entry : undefined);
  }

  private live(state: string, now: number): boolean {
    const held = this.entries.get(state);
    return held !== undefined && held.expiresAt > now;
  }

  private untilFirstExpiry(states: Iterable<string>, now: number): number | undefined {
    let first = Infinity;
    for (const s of states) first = Math.min(first, this.entries.get(s)?.expiresAt ?? Infinity);
    return Number.isFinite(first) ? Math.max(1, first - now) : undefined;
  }

  private sweep(now: number): void {
    for (const [state, held] of this.entries) if (held.expiresAt <= now) this.remove(state);
  }

  private remove(state: string): void {
    const held = this.entries.get(state);
    if (!held) return;
    this.entries.delete(state);
    const { browserBinding, clientAddress } = held.entry;
    if (this.byBinding.get(browserBinding) === state) this.byBinding.delete(browserBinding);
    if (clientAddress !== undefined) {
      const states = this.byAddress.get(clientAddress);
      states?.delete(state);
      if (states?.size === 0) this.byAddress.delete(clientAddress);
    }
  }
}
