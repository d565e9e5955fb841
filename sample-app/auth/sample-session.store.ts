import { Injectable, Module } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import type { OAuthTokens } from '../../src/oauth/index.js';

/** A signed-in browser: who it is and its tokens (never shown). */
export interface SampleSession {
  readonly subject: string;
  tokens: OAuthTokens;
}

/** The parts of a request the sessions read. */
export interface CookieRequest {
  headers: { cookie?: string };
}

/** The HttpOnly cookie that names a session. */
export const SESSION_COOKIE = 'nr_session';

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

/**
 * The sample's signed-in sessions, in memory (a sample; a real app uses its session store): created by
 * the sign-in callback, read by `/auth/*` and by the admin guard.
 */
@Injectable()
export class SampleSessionStore {
  private readonly sessions = new Map<string, SampleSession>();

  /** Starts a session; returns its id (the cookie's value). */
  create(session: SampleSession): string {
    const id = randomBytes(32).toString('base64url');
    this.sessions.set(id, session);
    return id;
  }

  /** The id the request's session cookie carries ('' without one). */
  idOf(request: CookieRequest): string {
    return cookiesOf(request)[SESSION_COOKIE] ?? '';
  }

  /** The session of the request's cookie, if it is signed in. */
  fromRequest(request: CookieRequest): SampleSession | undefined {
    return this.sessions.get(this.idOf(request));
  }

  get(id: string): SampleSession | undefined {
    return this.sessions.get(id);
  }

  delete(id: string): void {
    this.sessions.delete(id);
  }
}

/** Provides the one `SampleSessionStore` of the application (imported by the sign-in and the admin guard). */
@Module({ providers: [SampleSessionStore], exports: [SampleSessionStore] })
export class SampleSessionModule {}
