import { Controller, Get, Header, HttpCode, Post, Query, Redirect, Req, Res } from '@nestjs/common';
import { OAUTH_BINDING_COOKIE, OAuthClientService, OAuthResponseHeaders } from '../../src/nest/oauth/index.js';
import { OAuthFailure } from '../../src/oauth/index.js';
import { cookiesOf, SampleSessionStore, SESSION_COOKIE } from './sample-session.store.js';

interface HttpRequest {
  headers: { cookie?: string; 'x-request-id'?: string | string[] };
  url?: string;
  originalUrl?: string;
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

/**
 * Sign-in with the authorization-code flow and PKCE: /auth/login → the provider → /auth/callback →
 * /auth/me, POST /auth/refresh, /auth/logout. Sessions live in `SampleSessionStore` (memory; the admin
 * guard reads them too). Every answer here carries `Cache-Control: no-store` and `Referrer-Policy: no-referrer`.
 */
@Controller('auth')
@OAuthResponseHeaders()
export class AuthController {
  constructor(
    private readonly oauth: OAuthClientService,
    private readonly sessions: SampleSessionStore,
  ) {}

  @Get('login')
  @Redirect()
  async login(
    @Query('returnTo') returnTo: string | undefined,
    @Req() req: HttpRequest,
    @Res({ passthrough: true }) res: HttpResponse,
  ): Promise<{ url: string }> {
    const login = await this.oauth.startLogin({ returnTo: returnTo ?? '/auth/me', correlationId: requestId(req) });
    res.setHeader('Set-Cookie', cookie(OAUTH_BINDING_COOKIE, login.browserBinding, 600));
    return { url: login.authorizationUrl };
  }

  /** The provider's redirect back: `303 See Other` to where the login started (RFC 9700 §4.12). */
  @Get('callback')
  @Redirect()
  async callback(
    @Req() req: HttpRequest,
    @Res({ passthrough: true }) res: HttpResponse,
  ): Promise<{ url: string; statusCode: number }> {
    const query = new URL(req.originalUrl ?? req.url ?? '', 'http://sample.invalid').searchParams;
    const done = await this.oauth.completeLogin({
      query,
      browserBinding: cookiesOf(req)[OAUTH_BINDING_COOKIE],
      correlationId: requestId(req),
    });
    const sessionId = this.sessions.create({ subject: String(done.claims.sub), tokens: done.tokens });
    res.setHeader('Set-Cookie', [cookie(OAUTH_BINDING_COOKIE, '', 0), cookie(SESSION_COOKIE, sessionId, 3_600)]);
    return { url: done.returnTo, statusCode: 303 };
  }

  /** Who is signed in — never a token. */
  @Get('me')
  @Header('content-type', 'text/html; charset=utf-8')
  me(@Req() req: HttpRequest): string {
    const session = this.sessions.fromRequest(req);
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
    const session = this.sessions.get(id);
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
      if (error instanceof OAuthFailure && error.code === 'session_ended') this.sessions.delete(id);
      throw error;
    }
    return { subject: session.subject, expiresAt: session.tokens.expiresAt };
  }

  @Get('logout')
  @Redirect()
  async logout(@Req() req: HttpRequest, @Res({ passthrough: true }) res: HttpResponse): Promise<{ url: string }> {
    const id = this.sessions.idOf(req);
    const session = this.sessions.get(id);
    this.sessions.delete(id);
    res.setHeader('Set-Cookie', cookie(SESSION_COOKIE, '', 0));
    // client_id + post_logout_redirect_uri; the ID token only when OIDC_LOGOUT_ID_TOKEN_HINT=true.
    const providerLogout = session
      ? await this.oauth
          .logoutUrl({ idToken: session.tokens.idToken, logoutHint: session.subject, correlationId: requestId(req) })
          .catch(() => undefined)
      : undefined;
    return { url: providerLogout ?? '/auth/me' };
  }
}
