import { Inject, Injectable, Logger, Module, type OnModuleDestroy } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { OAuthFailure, type OAuthTokens } from '../../src/oauth/index.js';
import { SAMPLE_OAUTH_CONFIG, SampleOAuthConfigModule, type SampleOAuthConfig } from '../config/oauth.config.js';

/** A signed-in browser: who it is and its tokens (never shown). */
export interface SampleSession {
  readonly subject: string;
  tokens: OAuthTokens;
}

/** The parts of a request the sessions read. */
export interface CookieRequest {
  headers: { cookie?: string };
}

/** How long a session lives (and its cookie), in seconds. */
export const SESSION_TTL_SECONDS = 3_600;

/** The longest a session read or write waits for Redis, in ms. */
const REDIS_TIMEOUT = 1_000;

/** The cookies of a request, by name. */
export function cookiesOf(request: CookieRequest): Record<string, string> {
  const result: Record<string, string> = {};
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const [name, ...value] = part.trim().split('=');
    if (name) {
      try {
        result[name] = decodeURIComponent(value.join('='));
      } catch {
        // a malformed cookie is no cookie
      }
    }
  }
  return result;
}

/** Where sessions are kept. */
interface SessionBackend {
  get(id: string): Promise<SampleSession | undefined>;
  set(id: string, session: SampleSession): Promise<void>;
  delete(id: string): Promise<void>;
  close(): Promise<void>;
}

class MemorySessions implements SessionBackend {
  private readonly sessions = new Map<string, { session: SampleSession; expiresAt: number }>();

  get(id: string): Promise<SampleSession | undefined> {
    const held = this.sessions.get(id);
    if (held && held.expiresAt <= Date.now()) this.sessions.delete(id);
    return Promise.resolve(held && held.expiresAt > Date.now() ? held.session : undefined);
  }

  set(id: string, session: SampleSession): Promise<void> {
    this.sessions.set(id, { session, expiresAt: Date.now() + SESSION_TTL_SECONDS * 1_000 });
    return Promise.resolve();
  }

  delete(id: string): Promise<void> {
    this.sessions.delete(id);
    return Promise.resolve();
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}

/** Sessions in Redis (`<REDIS_KEY_PREFIX>:sample:session:<sha-less id>`), each key with the session's TTL. */
class RedisSessions implements SessionBackend {
  private readonly client: Promise<Redis>;

  constructor(
    url: string,
    private readonly prefix: string,
  ) {
    this.client = import('ioredis').then(({ Redis }) => {
      const client = new Redis(url, {
        enableOfflineQueue: false,
        maxRetriesPerRequest: 0,
        retryStrategy: () => 500,
        lazyConnect: true,
      });
      client.on('error', () => undefined); // a failed command answers 503; the reconnection goes on
      client.connect().catch(() => undefined);
      return client;
    });
  }

  async get(id: string): Promise<SampleSession | undefined> {
    const raw = await this.run((c) => c.get(this.key(id)));
    return raw === null ? undefined : (JSON.parse(raw) as SampleSession);
  }

  async set(id: string, session: SampleSession): Promise<void> {
    await this.run((c) => c.set(this.key(id), JSON.stringify(session), 'EX', SESSION_TTL_SECONDS));
  }

  async delete(id: string): Promise<void> {
    await this.run((c) => c.del(this.key(id)));
  }

  async close(): Promise<void> {
    (await this.client).disconnect();
  }

  private key(id: string): string {
    return `${this.prefix}:sample:session:${id}`;
  }

  private async run<T>(command: (client: Redis) => Promise<T>): Promise<T> {
    const client = await this.client;
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([
        command(client),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no answer within ${REDIS_TIMEOUT} ms`)), REDIS_TIMEOUT);
        }),
      ]);
    } finally {
      clearTimeout(timer);
    }
  }
}

/**
 * The sample's signed-in sessions: created by the sign-in callback, read by `/auth/*` and by the admin
 * guard. With `REDIS_URL` they live in the same Redis as the pending logins, so a user signed in on one
 * instance is signed in on all of them and signing out ends the session everywhere; without it, in this
 * process's memory. A store that cannot be reached answers 503 `store_unavailable` (logged once per
 * burst), never "not signed in" and never a session kept elsewhere.
 */
@Injectable()
export class SampleSessionStore implements OnModuleDestroy {
  /** The name of the session cookie (see `SampleOAuthConfig.sessionCookie`). */
  readonly cookie: string;
  private readonly backend: SessionBackend;
  private readonly logger = new Logger('SampleSessions');
  private lastOutageLog = -Infinity;

  constructor(@Inject(SAMPLE_OAUTH_CONFIG) config: SampleOAuthConfig) {
    this.cookie = config.sessionCookie;
    this.backend = config.redisUrl ? new RedisSessions(config.redisUrl, config.redisKeyPrefix) : new MemorySessions();
  }

  async onModuleDestroy(): Promise<void> {
    await this.backend.close();
  }

  /** Starts a session; returns its id (the cookie's value). */
  async create(session: SampleSession): Promise<string> {
    const id = randomBytes(32).toString('base64url');
    await this.guard(this.backend.set(id, session));
    return id;
  }

  /** Stores a session's new tokens. */
  async update(id: string, session: SampleSession): Promise<void> {
    await this.guard(this.backend.set(id, session));
  }

  /** The id the request's session cookie carries ('' without one). */
  idOf(request: CookieRequest): string {
    return cookiesOf(request)[this.cookie] ?? '';
  }

  /** The session of the request's cookie, if it is signed in. */
  fromRequest(request: CookieRequest): Promise<SampleSession | undefined> {
    return this.get(this.idOf(request));
  }

  async get(id: string): Promise<SampleSession | undefined> {
    if (!/^[A-Za-z0-9_-]{43}$/.test(id)) return undefined;
    return this.guard(this.backend.get(id));
  }

  async delete(id: string): Promise<void> {
    if (!/^[A-Za-z0-9_-]{43}$/.test(id)) return;
    await this.guard(this.backend.delete(id));
  }

  private async guard<T>(operation: Promise<T>): Promise<T> {
    try {
      return await operation;
    } catch (error) {
      const now = Date.now();
      if (now - this.lastOutageLog >= 60_000) {
        this.lastOutageLog = now;
        this.logger.error(
          `OAUTH_STORE_UNAVAILABLE the session store is unavailable: sign-in answers 503 until it answers error=${error instanceof Error ? error.name : typeof error}`,
        );
      }
      throw new OAuthFailure('store_unavailable', 503, 'Sign-in is unavailable right now; try again shortly.');
    }
  }
}

/** Provides the one `SampleSessionStore` of the application (imported by the sign-in and the admin guard). */
@Module({ imports: [SampleOAuthConfigModule], providers: [SampleSessionStore], exports: [SampleSessionStore] })
export class SampleSessionModule {}
