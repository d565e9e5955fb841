import { Controller, Get, Header, Query, Redirect, Req, Res } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { OAUTH_BINDING_COOKIE, OAuthClientService } from '../../src/nest/oauth/index.js';
import type { OAuthTokens } from '../../src/oauth/index.js';

interface Session {
  readonly subject: string;
  tokens: OAuthTokens;
}

interface HttpRequest {
  headers: { cookie?: string };
  url?: string;
  originalUrl?: string;
}

interface HttpResponse {
  setHeader(name: string, value: string | string[]): void;
}

const SESSION_COOKIE = 'nr_session';

function cookies(request: HttpRequest): Record<string, string> {
  const result: Record<string, string> = {};
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const [name, ...value] = part.trim().split('=');
    if (name) result[name] = decodeURIComponent(value.join('='));
  }
  return result;
}

function cookie(name: string, value: string, maxAgeSeconds: number): string {
  return `${name}=${encodeURIComponent(value)}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAgeSeconds}`;
}

/**
 * Sign-in with the authorization-code flow and PKCE: /auth/login → the provider → /auth/callback →
 * /auth/me. Sessions live in memory (a sample; a real app uses its session store).
 */
@Controller('auth')
export class AuthController {
  private readonly sessions = new Map<string, Session>();

  constructor(private readonly oauth: OAuthClientService) {}

  @Get('login')
  @Redirect()
  async login(
    @Query('returnTo') returnTo: string | undefined,
    @Res({ passthrough: true }) res: HttpResponse,
  ): Promise<{ url: string }> {
    const login = await this.oauth.startLogin({ returnTo: returnTo ?? '/auth/me' });
    res.setHeader('Set-Cookie', cookie(OAUTH_BINDING_COOKIE, login.browserBinding, 600));
    return { url: login.authorizationUrl };
  }

  @Get('callback')
  @Redirect()
  async callback(@Req() req: HttpRequest, @Res({ passthrough: true }) res: HttpResponse): Promise<{ url: string }> {
    const query = new URL(req.originalUrl ?? req.url ?? '', 'http://sample.invalid').searchParams;
    const done = await this.oauth.completeLogin({ query, browserBinding: cookies(req)[OAUTH_BINDING_COOKIE] });
    const sessionId = randomBytes(32).toString('base64url');
    this.sessions.set(sessionId, { subject: String(done.claims.sub), tokens: done.tokens });
    res.setHeader('Set-Cookie', [cookie(OAUTH_BINDING_COOKIE, '', 0), cookie(SESSION_COOKIE, sessionId, 3_600)]);
    return { url: done.returnTo };
  }

  @Get('me')
  @Header('content-type', 'text/html; charset=utf-8')
  me(@Req() req: HttpRequest): string {
    const session = this.sessions.get(cookies(req)[SESSION_COOKIE] ?? '');
    if (!session) return '<!doctype html><title>Sample</title><p>Not signed in. <a href="/auth/login">Sign in</a></p>';
    const user = session.subject.replace(/[^\w.@-]/g, '');
    return `<!doctype html><title>Sample</title><p>Signed in as <strong id="user">${user}</strong>. <a href="/auth/logout">Sign out</a></p>`;
  }

  @Get('logout')
  @Redirect()
  async logout(@Req() req: HttpRequest, @Res({ passthrough: true }) res: HttpResponse): Promise<{ url: string }> {
    const id = cookies(req)[SESSION_COOKIE] ?? '';
    const session = this.sessions.get(id);
    this.sessions.delete(id);
    res.setHeader('Set-Cookie', cookie(SESSION_COOKIE, '', 0));
    const providerLogout = session
      ? await this.oauth.logoutUrl({ idToken: session.tokens.idToken }).catch(() => undefined)
      : undefined;
    return { url: providerLogout ?? '/auth/me' };
  }
}
