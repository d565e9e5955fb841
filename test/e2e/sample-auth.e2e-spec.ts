import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { INestApplication } from '@nestjs/common';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import type { App } from 'supertest/types.js';
import { ResilienceValidationError } from '../../src/index.js';
import { OAuthClientService } from '../../src/nest/oauth/index.js';
import type { InMemoryPendingAuthorizationStore } from '../../src/oauth/index.js';
import { oauthConfigFromEnv, SAMPLE_OAUTH_CONFIG } from '../../sample-app/config/oauth.config.js';
import { TestIdentityProvider } from '../utils/identity-provider.js';
import { LineLogger } from '../utils/line.logger.js';
import { sessionCookieOf, signInAtProvider, startSample } from './sample-app.fixture.js';

/** Every log line of every sample app started here; scanned at the end for every secret seen. */
const lines = new LineLogger();
const secrets = new Set<string>();
const providers: TestIdentityProvider[] = [];

afterAll(() => {
  for (const idp of providers) for (const s of idp.secretsSeen) secrets.add(s);
  const candidates = [...secrets].filter((s) => s.length >= 8);
  expect(candidates.length).toBeGreaterThan(20);
  expect(lines.lines.filter((l) => l.code !== undefined).length).toBeGreaterThan(10);
  expect(lines.lines.filter((line) => candidates.some((secret) => line.text.includes(secret)))).toEqual([]);
});

/** The sample app as `npm start` builds it, with the OAuth settings these environment variables give. */
function startApp(env: Record<string, string>): Promise<INestApplication<App>> {
  return startSample(undefined, {
    logger: lines,
    override: (builder) => builder.overrideProvider(SAMPLE_OAUTH_CONFIG).useValue(oauthConfigFromEnv(env)),
  });
}

async function startFailure(env: Record<string, string>): Promise<Error> {
  const error = await startApp(env).then(
    async (app) => {
      await app.close();
      return undefined;
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(Error);
  return error as Error;
}

const cookieOf = (response: request.Response, name: string): string | undefined =>
  (response.headers['set-cookie'] as unknown as string[] | undefined)
    ?.find((c) => c.startsWith(`${name}=`))
    ?.split(';')[0];

/** Signs `user` in through the sample and the built-in provider; the session cookie (`name=value`). */
async function signInSession(server: App, user: string): Promise<string> {
  const login = await request(server).get('/auth/login').expect(302);
  const binding = cookieOf(login, 'nr_oauth_binding')!;
  secrets.add(binding.split('=')[1]);
  const callbackUrl = new URL(await signInAtProvider(login.headers.location, user));
  secrets.add(callbackUrl.searchParams.get('code')!);
  const callback = await request(server).get(`/auth/callback${callbackUrl.search}`).set('Cookie', binding).expect(303);
  const session = sessionCookieOf(callback)!;
  secrets.add(session.split('=')[1]);
  return session;
}

function expectHygiene(response: request.Response): void {
  expect(response.headers['cache-control']).toBe('no-store');
  expect(response.headers['referrer-policy']).toBe('no-referrer');
  expect(response.headers.pragma).toBe('no-cache');
}

describe('sample app: sign-in with PKCE against the built-in identity provider (defaults)', () => {
  let app: INestApplication<App>;

  beforeAll(async () => {
    app = await startApp({});
  });

  afterAll(async () => {
    await app.close();
  });

  it('signs a user in (303 to where it started), shows who is signed in without a token, and signs out', async () => {
    const server = app.getHttpServer();
    const login = await request(server).get('/auth/login').expect(302);
    const binding = cookieOf(login, 'nr_oauth_binding')!;
    expect((login.headers['set-cookie'] as unknown as string[])[0]).toMatch(
      /^nr_oauth_binding=[^;]+; Path=\/; HttpOnly; SameSite=Lax/,
    );
    expect(login.headers.location).toContain('code_challenge_method=S256');
    secrets.add(binding.split('=')[1]);

    const callbackUrl = new URL(await signInAtProvider(login.headers.location, 'ada'));
    secrets.add(callbackUrl.searchParams.get('code')!);
    const callback = await request(server)
      .get(`/auth/callback${callbackUrl.search}`)
      .set('Cookie', binding)
      .expect(303);
    expect(callback.headers.location).toBe('/auth/me');
    expectHygiene(callback);
    const session = sessionCookieOf(callback)!;
    secrets.add(session.split('=')[1]);

    const me = await request(server).get('/auth/me').set('Cookie', session).expect(200);
    expect(me.text).toContain('<strong id="user">ada</strong>');
    expect(me.text).not.toMatch(/eyJ|token/i); // no JWT, no token of any kind

    // Replaying the callback is refused with a stable code and no token request.
    const replay = await request(server)
      .get(`/auth/callback${callbackUrl.search}`)
      .set('Cookie', binding)
      .set('X-Request-Id', 'replay-7')
      .expect(400);
    expect(replay.body).toMatchObject({ statusCode: 400, error: 'unknown_state' });
    expect(lines.withCorrelation('replay-7').map((l) => l.code)).toEqual(['OAUTH_CALLBACK_REJECTED']);
    expectHygiene(replay);

    const logout = await request(server).get('/auth/logout').set('Cookie', session).expect(302);
    const end = new URL(logout.headers.location);
    expect(end.pathname).toBe('/session/end');
    expect(end.searchParams.get('client_id')).toBe('nest-resilience-sample');
    expect(end.searchParams.get('post_logout_redirect_uri')).toBe('http://127.0.0.1:3000/auth/me');
    expect(end.searchParams.get('logout_hint')).toBe('ada');
    expect(end.searchParams.has('id_token_hint')).toBe(false);
    await request(server)
      .get('/auth/me')
      .set('Cookie', session)
      .expect(200)
      .expect((r) => expect(r.text).toContain('Not signed in'));
    expect(lines.lines.map((l) => l.code)).toEqual(
      expect.arrayContaining([
        'OAUTH_DISCOVERY_COMPLETED',
        'OAUTH_LOGIN_STARTED',
        'OAUTH_LOGIN_COMPLETED',
        'OAUTH_LOGOUT_STARTED',
      ]),
    );
  });

  it('refuses a callback from another browser, and an open redirect through returnTo — with the OAuth headers', async () => {
    const server = app.getHttpServer();
    const login = await request(server).get('/auth/login').expect(302);
    secrets.add(cookieOf(login, 'nr_oauth_binding')!.split('=')[1]);
    const callbackUrl = new URL(await signInAtProvider(login.headers.location, 'eve'));
    secrets.add(callbackUrl.searchParams.get('code')!);
    const res = await request(server)
      .get(`/auth/callback${callbackUrl.search}`)
      .set('Cookie', 'nr_oauth_binding=forged')
      .expect(400);
    expect(res.body).toMatchObject({ error: 'browser_mismatch' });
    expectHygiene(res);
    const redirect = await request(server).get('/auth/login?returnTo=https://evil.example/').expect(400);
    expect(redirect.body).toMatchObject({ error: 'invalid_return_to' });
    expectHygiene(redirect);
  });

  it('names the session cookie per instance without Redis (cookies ignore ports), and one for the fleet with it', async () => {
    expect(oauthConfigFromEnv({}).sessionCookie).toBe('nr_session_3000');
    expect(oauthConfigFromEnv({ PORT: '3001' }).sessionCookie).toBe('nr_session_3001');
    expect(oauthConfigFromEnv({ APP_URL: 'http://127.0.0.1:3002' }).sessionCookie).toBe('nr_session_3002');
    expect(oauthConfigFromEnv({ PORT: '3001', REDIS_URL: 'redis://127.0.0.1:6379' }).sessionCookie).toBe('nr_session');
    const session = await signInSession(app.getHttpServer(), 'ada');
    expect(session).toMatch(/^nr_session_3000=/);
  });

  it('refuses to start with OIDC_PKCE_METHOD=plain, and names every malformed variable', async () => {
    const plain = await startFailure({ OIDC_PKCE_METHOD: 'plain' });
    expect(plain).toBeInstanceOf(ResilienceValidationError);
    expect(plain.message).toMatch(/oauth\.pkceMethod: "plain" must be "S256"/);
    expect(() =>
      oauthConfigFromEnv({
        OIDC_TOKEN_RETRIES: 'many',
        OIDC_BREAK_MS: '-1',
        OIDC_ALLOW_HTTP: 'yes',
        OIDC_ISSUER: 'https://x',
      }),
    ).toThrow(ResilienceValidationError);
    try {
      oauthConfigFromEnv({
        OIDC_TOKEN_RETRIES: 'many',
        OIDC_BREAK_MS: '-1',
        OIDC_ALLOW_HTTP: 'yes',
        OIDC_ISSUER: 'https://x',
      });
    } catch (error) {
      const message = (error as Error).message;
      expect(message).toContain('(4 problems)');
      expect(message).toContain('env.OIDC_TOKEN_RETRIES: "many" must be a whole number >= 0');
      expect(message).toContain('env.OIDC_BREAK_MS: "-1" must be a whole number >= 1');
      expect(message).toContain('env.OIDC_ALLOW_HTTP: "yes" must be "true" or "false"');
      expect(message).toContain('env.OIDC_CLIENT_ID: undefined is required with OIDC_ISSUER');
    }
  });
});

describe('sample app against an external provider, configured only through the environment', () => {
  const idp = new TestIdentityProvider('http://127.0.0.1:59997/auth/callback');
  providers.push(idp);
  let app: INestApplication<App>;
  let env: Record<string, string>;

  beforeAll(async () => {
    await idp.start();
    env = {
      OIDC_ISSUER: idp.issuer,
      OIDC_CLIENT_ID: idp.clientId,
      OIDC_CLIENT_SECRET: idp.clientSecret,
      OIDC_CLIENT_AUTH_METHOD: 'client_secret_basic',
      OIDC_REDIRECT_URI: idp.redirectUri,
      OIDC_POST_LOGOUT_REDIRECT_URI: 'http://127.0.0.1:59997/signed-out',
      OIDC_SCOPES: 'openid offline_access',
      OIDC_ALLOW_HTTP: 'true',
      OIDC_TOKEN_ENDPOINT: idp.gatewayUrl,
      OIDC_TOKEN_TIMEOUT_MS: '3000',
      OIDC_TOKEN_DEADLINE_MS: '6000',
      OIDC_TOKEN_RETRIES: '2',
      OIDC_TOKEN_RETRY_DELAY_MS: '1',
      OIDC_BREAKER_THRESHOLD: '3',
      OIDC_BREAK_MS: '30000',
      OIDC_PENDING_TTL_MS: '60000',
    };
    app = await startApp(env);
  });

  afterAll(async () => {
    await app.close();
    await idp.stop();
  });

  /** /auth/login, then the provider: the callback path and the binding cookie. */
  async function atCallback(server: App, user = 'grace') {
    const login = await request(server).get('/auth/login').expect(302);
    const binding = cookieOf(login, 'nr_oauth_binding')!;
    secrets.add(binding.split('=')[1]);
    const query = await idp.authorize(login.headers.location, user);
    return { path: `/auth/callback?${query.toString()}`, query, binding };
  }

  it('signs in through the configured token endpoint, and refreshes single-flight with rotation', async () => {
    const server = app.getHttpServer();
    const { path, binding } = await atCallback(server);
    const callback = await request(server).get(path).set('Cookie', binding).expect(303);
    expectHygiene(callback);
    const session = sessionCookieOf(callback)!;
    secrets.add(session.split('=')[1]);

    const before = idp.tokenRequests;
    const [a, b] = await Promise.all([
      request(server).post('/auth/refresh').set('Cookie', session),
      request(server).post('/auth/refresh').set('Cookie', session),
    ]);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(a.body).toEqual({ subject: 'grace', expiresAt: expect.any(Number) });
    expect(JSON.stringify([a.body, b.body])).not.toMatch(/token/i);
    expectHygiene(a);
    expect(idp.tokenRequests - before).toBe(1);
    // The rotated refresh token is the session's now: the next refresh works (the old one would end it).
    await request(server).post('/auth/refresh').set('Cookie', session).expect(200);
    expect(idp.tokenRequests - before).toBe(2);
    const me = await request(server).get('/auth/me').set('Cookie', session).expect(200);
    for (const secret of idp.secretsSeen) expect(me.text).not.toContain(secret);
    const logout = await request(server).get('/auth/logout').set('Cookie', session).expect(302);
    expect(new URL(logout.headers.location).searchParams.get('post_logout_redirect_uri')).toBe(
      'http://127.0.0.1:59997/signed-out',
    );
    const after = await request(server).post('/auth/refresh').set('Cookie', session).expect(401);
    expect(after.body).toMatchObject({ error: 'session_ended' });
    expectHygiene(after);
  });

  it('answers a Retry-After past the deadline at once with 503 + Retry-After', async () => {
    const server = app.getHttpServer();
    const { path, binding } = await atCallback(server);
    idp.faults.push({ status: 503, contentType: 'text/plain', body: 'maintenance', retryAfter: '120' });
    const before = idp.tokenRequests;
    const res = await request(server).get(path).set('Cookie', binding).expect(503);
    expect(res.headers['retry-after']).toBe('120');
    expect(res.body).toMatchObject({ error: 'token_endpoint_unavailable' });
    expectHygiene(res);
    expect(idp.tokenRequests - before).toBe(1);
  });

  it('answers a spoiled ID token with 502 invalid_id_token and no session', async () => {
    const server = app.getHttpServer();
    const { path, binding } = await atCallback(server);
    idp.faults.push({ tamper: 'wrong-aud' });
    const res = await request(server).get(path).set('Cookie', binding).expect(502);
    expect(res.body).toMatchObject({ error: 'invalid_id_token' });
    expect(sessionCookieOf(res)).toBeUndefined();
    expectHygiene(res);
    expect(lines.lines.some((l) => l.code === 'OAUTH_ID_TOKEN_REJECTED' && l.text.includes('check=aud'))).toBe(true);
  });

  it('refuses repeated parameters, and never echoes a provider error unescaped', async () => {
    const server = app.getHttpServer();
    const { path, binding, query } = await atCallback(server);
    const repeated = await request(server)
      .get(`${path}&state=${query.get('state')}`)
      .set('Cookie', binding)
      .expect(400);
    expect(repeated.body).toMatchObject({ error: 'malformed_callback' });
    expectHygiene(repeated);
    const error = new URLSearchParams({
      error: '<script>alert(1)</script>',
      state: query.get('state')!,
      iss: idp.issuer,
    });
    const res = await request(server).get(`/auth/callback?${error.toString()}`).set('Cookie', binding).expect(400);
    expect(res.body).toMatchObject({ error: 'provider_error', providerError: '&lt;script&gt;alert(1)&lt;/script&gt;' });
    expect(res.text).not.toContain('<script>');
    expectHygiene(res);
  });

  it('answers invalid_client with 502 and logs it at error once per burst', async () => {
    const wrong = await startApp({ ...env, OIDC_CLIENT_SECRET: 'a-wrong-client-secret' });
    secrets.add('a-wrong-client-secret');
    try {
      const server = wrong.getHttpServer();
      const before = lines.lines.filter((l) => l.code === 'OAUTH_INVALID_CLIENT').length;
      for (let i = 0; i < 4; i++) {
        const { path, binding } = await atCallback(server);
        const res = await request(server).get(path).set('Cookie', binding).expect(502);
        expect(res.body).toMatchObject({ error: 'invalid_client' });
        expectHygiene(res);
      }
      const logged = lines.lines.filter((l) => l.code === 'OAUTH_INVALID_CLIENT').slice(before);
      expect(logged).toEqual([expect.objectContaining({ level: 'error' })]);
      // Four refusals with a breaker threshold of 3: the circuit stayed closed (another 502, not a 503).
      const { path, binding } = await atCallback(server);
      await request(server).get(path).set('Cookie', binding).expect(502);
    } finally {
      await wrong.close();
    }
  });

  it('fails the start when the provider does not fit: wrong issuer, or an authentication method it does not offer', async () => {
    const wrongIssuer = await startFailure({ ...env, OIDC_ISSUER: `${idp.issuer}/tenant-b` });
    expect(wrongIssuer.message).toMatch(/does not fit this client/);
    const basicOnly = await new TestIdentityProvider(idp.redirectUri, 'web-app', 'top-secret-of-the-web-app', {
      clientAuthMethods: ['client_secret_basic', 'none'],
    }).start();
    providers.push(basicOnly);
    try {
      const mismatch = await startFailure({
        ...env,
        OIDC_ISSUER: basicOnly.issuer,
        OIDC_CLIENT_AUTH_METHOD: 'client_secret_post',
        OIDC_TOKEN_ENDPOINT: basicOnly.gatewayUrl,
      });
      expect(mismatch).toBeInstanceOf(ResilienceValidationError);
      expect(mismatch.message).toContain('token_endpoint_auth_methods_supported are [client_secret_basic, none]');
    } finally {
      await basicOnly.stop();
    }
  });

  it('answers a failed callback in a browser with a page that links back to the login, towards the original page', async () => {
    const server = app.getHttpServer();
    const login = await request(server).get('/auth/login?returnTo=%2Forders%3Fpage%3D2').expect(302);
    const binding = cookieOf(login, 'nr_oauth_binding')!;
    secrets.add(binding.split('=')[1]);
    const query = await idp.authorize(login.headers.location, 'grace');
    query.set('code', 'a-forged-code');
    const page = await request(server)
      .get(`/auth/callback?${query.toString()}`)
      .set('Cookie', binding)
      .set('Accept', 'text/html,application/xhtml+xml')
      .expect(400)
      .expect('content-type', /text\/html/);
    expectHygiene(page);
    expect(page.text).toContain('invalid_grant');
    expect(page.text).toContain('href="/auth/login?returnTo=/orders%3Fpage%3D2"');
    // A callback that never found its login (replayed, expired, forged state) still shows the way out.
    const unknown = await request(server)
      .get(`/auth/callback?${query.toString()}`)
      .set('Cookie', binding)
      .set('Accept', 'text/html')
      .expect(400);
    expect(unknown.text).toContain('unknown_state');
    expect(unknown.text).toContain('href="/auth/login?returnTo=/auth/me"');
    // Other clients keep the JSON answer.
    const json = await request(server).get(`/auth/callback?${query.toString()}`).set('Cookie', binding).expect(400);
    expect(json.body).toMatchObject({ error: 'unknown_state' });
  });

  it('keeps one pending login per browser, and caps them per client address (429) and overall (503)', async () => {
    const capped = await startApp({ ...env, OIDC_PENDING_PER_ADDRESS: '3' });
    try {
      const server = capped.getHttpServer();
      const service: unknown = capped.get(OAuthClientService);
      const store = (service as { store: InMemoryPendingAuthorizationStore }).store;
      const first = await request(server).get('/auth/login').expect(302);
      const binding = cookieOf(first, 'nr_oauth_binding')!;
      secrets.add(binding.split('=')[1]);
      for (let i = 0; i < 30; i++) {
        const again = await request(server).get('/auth/login').set('Cookie', binding).expect(302);
        expect(cookieOf(again, 'nr_oauth_binding')).toBe(binding);
      }
      expect(store.size).toBe(1);
      // Browsers without the cookie, from the same address (127.0.0.1): two more fit, the next one is refused.
      for (let i = 0; i < 2; i++) await request(server).get('/auth/login').expect(302);
      const tooMany = await request(server).get('/auth/login').expect(429);
      expect(tooMany.body).toMatchObject({ error: 'too_many_logins' });
      expect(Number(tooMany.headers['retry-after'])).toBeGreaterThan(0);
      expectHygiene(tooMany);
      expect(store.size).toBe(3);
    } finally {
      await capped.close();
    }
    const full = await startApp({ ...env, OIDC_PENDING_PER_ADDRESS: '0', OIDC_PENDING_TOTAL: '2' });
    try {
      const server = full.getHttpServer();
      for (let i = 0; i < 2; i++) await request(server).get('/auth/login').expect(302);
      const res = await request(server).get('/auth/login').expect(503);
      expect(res.body).toMatchObject({ error: 'login_capacity' });
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
    } finally {
      await full.close();
    }
  });

  it('with OIDC_DEFER_DISCOVERY=true starts without the provider, and answers 503 until it is reachable', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const deferred = await startApp({ ...env, OIDC_ISSUER: `http://127.0.0.1:${port}`, OIDC_DEFER_DISCOVERY: 'true' });
    try {
      const res = await request(deferred.getHttpServer()).get('/auth/login').expect(503);
      expect(res.body).toMatchObject({ error: 'discovery_failed' });
      expect(res.text).not.toContain(String(port));
      expectHygiene(res);
      expect(lines.lines.some((l) => l.code === 'OAUTH_DISCOVERY_FAILED' && l.level === 'error')).toBe(true);
    } finally {
      await deferred.close();
    }
  });
});
