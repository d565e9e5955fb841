import { Controller, Get, Header, HttpCode, Post, Query, Redirect, Req, Res } from '@nestjs/common';
import { OAUTH_BINDING_COOKIE, OAuthClientService, OAuthResponseHeaders } from '../../src/nest/oauth/index.js';
import { OAuthFailure } from '../../src/oauth/index.js';
import { signInUrl } from '../admin/sign-in-required.filter.js';
import { cookiesOf, SampleSessionStore, SESSION_TTL_SECONDS } from './sample-session.store.js';

interface HttpRequest {
  headers: { cookie?: string; 'x-request-id'?: string | string[]; accept?: string };
  url?: string;
  originalUrl?: string;
  ip?: string;
  socket?: { remoteAddress?: string };
}

interface HttpResponse {
  setHeader(name: string, value: string | string[]): void;
}

function cookie(name: string, value: string, maxAgeSeconds: number): string {
  return `${name}=${encodeURIComponent(value)}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAgeSeconds}`;
}

/** The caller's request id, when it is a plain token: it names the log lines of this request. */
function requestId(request: HttpRequest): string | undefined {
  const id = request.headers['x-request-id'];
  return typeof id === 'string' && /^[\w.-]{1,64}$/.test(id) ? id : undefined;
}

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * A failed callback, for a browser: a page that says what happened and links back to the login route,
 * towards the page the login was started for (when the callback got that far). Thrown by the callback
 * when the browser asks for HTML; other clients get the JSON answer of `OAuthExceptionFilter`.
 */
export class SignInFailedPage extends Error {
  constructor(readonly failure: OAuthFailure) {
    super(failure.message);
    this.name = 'SignInFailedPage';
  }

  /** The link back: `/auth/login?returnTo=<the original page>`. */
  get retryUrl(): string {
    return signInUrl(this.failure.returnTo ?? '/auth/me');
  }

  html(): string {
    const f = this.failure;
    return `<!doctype html><title>Sign-in failed</title><h1>Sign-in failed</h1><p id="reason">${escapeHtml(f.message)} <code>${escapeHtml(f.code)}</code></p><p><a id="retry" href="${escapeHtml(this.retryUrl)}">Sign in again</a></p>`;
  }
}

/**
 * Sign-in with the authorization-code flow and PKCE: /auth/login → the provider → /auth/callback →
 * /auth/me, POST /auth/refresh, /auth/logout. Sessions live in `SampleSessionStore` (Redis with
 * `REDIS_URL`, shared by every instance; else memory; the admin guard reads them too). Every answer here
 * carries `Cache-Control: no-store` and `Referrer-Policy: no-referrer`.
 */
@Controller('auth')
@OAuthResponseHeaders()
export class AuthController {
  constructor(
    private readonly oauth: OAuthClientService,
    private readonly sessions: SampleSessionStore,
  ) {}

  /**
   * Starts a login. A browser that already has a binding cookie keeps it, and its new login replaces the
   * one it left waiting (one pending login per browser); logins waiting per client address and overall
   * are capped (429 / 503 past them).
   */
  @Get('login')
  @Redirect()
  async login(
    @Query('returnTo') returnTo: string | undefined,
    @Req() req: HttpRequest,
    @Res({ passthrough: true }) res: HttpResponse,
  ): Promise<{ url: string }> {
    const login = await this.oauth.startLogin({
      returnTo: returnTo ?? '/auth/me',
      correlationId: requestId(req),
      browserBinding: cookiesOf(req)[OAUTH_BINDING_COOKIE],
      clientAddress: req.ip ?? req.socket?.remoteAddress,
    });
    res.setHeader('Set-Cookie', cookie(OAUTH_BINDING_COOKIE, login.browserBinding, 600));
    return { url: login.authorizationUrl };
  }

  /**
   * The provider's redirect back: `303 See Other` to where the login started (RFC 9700 §4.12). A failure
   * answers a browser with a page linking back to the login (towards the original page), others with JSON.
   */
  @Get('callback')
  @Redirect()
  async callback(
    @Req() req: HttpRequest,
    @Res({ passthrough: true }) res: HttpResponse,
  ): Promise<{ url: string; statusCode: number }> {
    const query = new URL(req.originalUrl ?? req.url ?? '', 'http://sample.invalid').searchParams;
    try {
      const done = await this.oauth.completeLogin({
        query,
        browserBinding: cookiesOf(req)[OAUTH_BINDING_COOKIE],
        correlationId: requestId(req),
      });
      let sessionId: string;
      try {
        sessionId = await this.sessions.create({ subject: String(done.claims.sub), tokens: done.tokens });
      } catch (error) {
        if (error instanceof OAuthFailure) error.returnTo ??= done.returnTo;
        throw error;
      }
      res.setHeader('Set-Cookie', [
        cookie(OAUTH_BINDING_COOKIE, '', 0),
        cookie(this.sessions.cookie, sessionId, SESSION_TTL_SECONDS),
      ]);
      return { url: done.returnTo, statusCode: 303 };
    } catch (error) {
      if (error instanceof OAuthFailure && /\btext\/html\b/.test(req.headers.accept ?? '')) {
        throw new SignInFailedPage(error);
      }
      throw error;
    }
  }

  /** Who is signed in — never a token. */
  @Get('me')
  @Header('content-type', 'text/html; charset=utf-8')
  async me(@Req() req: HttpRequest): Promise<string> {
    const session = await this.sessions.fromRequest(req);
    if (!session) return '<!doctype html><title>Sample</title><p>Not signed in. <a href="/auth/login">Sign in</a></p>';
    const user = session.subject.replace(/[^\w.@-]/g, '');
    const until = session.tokens.expiresAt ? new Date(session.tokens.expiresAt).toISOString() : 'unknown';
    return `<!doctype html><title>Sample</title><p>Signed in as <strong id="user">${user}</strong> (access until <span id="until">${until}</span>). <a href="/auth/logout">Sign out</a></p>`;
  }

  /**
   * Refreshes the signed-in session's tokens: concurrent refreshes share one request to the provider,
   * the rotated refresh token replaces the old one, and a refused refresh token ends the session (401).
   */
  @Post('refresh')
  @HttpCode(200)
  async refresh(@Req() req: HttpRequest): Promise<{ subject: string; expiresAt: number | undefined }> {
    const id = this.sessions.idOf(req);
    const session = await this.sessions.get(id);
    if (!session?.tokens.refreshToken) {
      throw new OAuthFailure('session_ended', 401, 'Not signed in, or the session cannot be refreshed.');
    }
    try {
      // A refreshed ID token must be genuine and name the same user.
      session.tokens = await this.oauth.refresh(id, session.tokens.refreshToken, {
        correlationId: requestId(req),
        subject: session.subject,
      });
    } catch (error) {
      if (error instanceof OAuthFailure && error.code === 'session_ended') await this.sessions.delete(id);
      throw error;
    }
    await this.sessions.update(id, session);
    return { subject: session.subject, expiresAt: session.tokens.expiresAt };
  }

  /** Signs out: the session ends in the store (on every instance, with `REDIS_URL`), then at the provider. */
  @Get('logout')
  @Redirect()
  async logout(@Req() req: HttpRequest, @Res({ passthrough: true }) res: HttpResponse): Promise<{ url: string }> {
    const id = this.sessions.idOf(req);
    const session = await this.sessions.get(id);
    await this.sessions.delete(id);
    res.setHeader('Set-Cookie', cookie(this.sessions.cookie, '', 0));
    // client_id + post_logout_redirect_uri; the ID token only when OIDC_LOGOUT_ID_TOKEN_HINT=true.
    const providerLogout = session
      ? await this.oauth
          .logoutUrl({ idToken: session.tokens.idToken, logoutHint: session.subject, correlationId: requestId(req) })
          .catch(() => undefined)
      : undefined;
    return { url: providerLogout ?? '/auth/me' };
  }
}
