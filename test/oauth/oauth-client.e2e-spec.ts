import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  getHttpRetryAfter,
  ResiliencePipelineBuilder,
  ResilienceValidationError,
  type ResiliencePipeline,
} from '../../src/index.js';
import {
  handleTransientTokenFailure,
  OAuthClient,
  OAuthFailure,
  type OAuthClientOptions,
} from '../../src/oauth/index.js';
import { FakeTimeProvider } from '../../src/testing/index.js';
import { driveWithClock } from '../utils/drive.js';
import { TestIdentityProvider } from '../utils/identity-provider.js';

const REDIRECT_URI = 'http://127.0.0.1:59999/auth/callback';

/** A confidential client of `idp` that asks for a refresh token. */
function clientOf(idp: TestIdentityProvider, options: Partial<OAuthClientOptions> = {}): OAuthClient {
  return new OAuthClient({
    issuer: idp.issuer,
    clientId: idp.clientId,
    clientSecret: idp.clientSecret,
    redirectUri: REDIRECT_URI,
    scopes: ['openid', 'offline_access'],
    allowInsecureRequests: true,
    ...options,
  });
}

describe('OAuthClient against a real OpenID provider (oidc-provider, PKCE required)', () => {
  const idp = new TestIdentityProvider(REDIRECT_URI);
  const time = new FakeTimeProvider(Date.now());
  let pipeline: ResiliencePipeline<unknown>;

  function client(overrides: Partial<OAuthClientOptions> = {}): OAuthClient {
    return clientOf(idp, { tokenEndpoint: idp.gatewayUrl, pipeline, timeProvider: time, ...overrides });
  }

  /** Moves the clock only while the provider is not working on a token request. */
  const drive = <T>(promise: Promise<T>): Promise<T> =>
    driveWithClock(promise, time, { mayAdvance: () => idp.inFlight === 0, turns: 100, rounds: 2_000 });

  async function failure(promise: Promise<unknown>): Promise<OAuthFailure> {
    const error = await drive(
      promise.then(
        () => undefined,
        (e: unknown) => e,
      ),
    );
    expect(error).toBeInstanceOf(OAuthFailure);
    return error as OAuthFailure;
  }

  beforeAll(async () => {
    await idp.start();
    pipeline = new ResiliencePipelineBuilder({ timeProvider: time })
      .addRetry({
        maxRetryAttempts: 2,
        delay: 100,
        shouldHandle: handleTransientTokenFailure,
        retryAfter: ({ outcome }) => (outcome.ok ? undefined : getHttpRetryAfter(outcome.error, Date.now())),
      })
      .addCircuitBreaker({
        kind: 'consecutive',
        failureThreshold: 5,
        breakDuration: 60_000,
        shouldHandle: handleTransientTokenFailure,
      })
      .addTimeout({ timeout: 2_000, mode: 'aggressive' })
      .build();
  });

  afterAll(async () => {
    await idp.stop();
  });

  it('completes the authorization-code flow with PKCE S256 and verifies the ID token', async () => {
    const c = client();
    const login = await c.startLogin({ returnTo: '/orders?page=2' });
    const url = new URL(login.authorizationUrl);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(url.searchParams.get('state')).toBe(login.state);
    expect(url.searchParams.get('nonce')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(login.authorizationUrl).not.toContain('code_verifier');
    const query = await idp.authorize(login.authorizationUrl);
    const before = idp.tokenRequests;
    const done = await drive(c.completeLogin({ query, browserBinding: login.browserBinding }));
    expect(idp.tokenRequests - before).toBe(1);
    expect(done.claims).toMatchObject({ sub: 'alice', iss: idp.issuer, aud: idp.clientId });
    expect(done.returnTo).toBe('/orders?page=2');
    expect(done.tokens.accessToken).toEqual(expect.any(String));
    expect(done.tokens.refreshToken).toEqual(expect.any(String));
    await expect(drive(c.userInfo(done.tokens.accessToken, 'alice'))).resolves.toMatchObject({ sub: 'alice' });
    await expect(c.logoutUrl({ idTokenHint: done.tokens.idToken })).resolves.toContain('/session/end');
  });

  it('rejects a replayed, a wrong, a missing and a foreign state — without any token request', async () => {
    const c = client();
    const login = await c.startLogin();
    const query = await idp.authorize(login.authorizationUrl);
    await drive(c.completeLogin({ query, browserBinding: login.browserBinding }));
    const before = idp.tokenRequests;
    expect((await failure(c.completeLogin({ query, browserBinding: login.browserBinding }))).code).toBe(
      'unknown_state',
    ); // replayed
    const wrong = new URLSearchParams(query);
    wrong.set('state', 'x'.repeat(43));
    expect((await failure(c.completeLogin({ query: wrong, browserBinding: login.browserBinding }))).code).toBe(
      'unknown_state',
    );
    const missing = new URLSearchParams(query);
    missing.delete('state');
    expect((await failure(c.completeLogin({ query: missing, browserBinding: login.browserBinding }))).code).toBe(
      'missing_state',
    );
    // A state started by another client instance (another store): foreign to this one.
    const other = client();
    const foreign = await other.startLogin();
    const foreignQuery = await idp.authorize(foreign.authorizationUrl);
    expect((await failure(c.completeLogin({ query: foreignQuery, browserBinding: foreign.browserBinding }))).code).toBe(
      'unknown_state',
    );
    expect(idp.tokenRequests).toBe(before);
  });

  it('rejects a callback from another browser, and the login cannot be completed afterwards', async () => {
    const c = client();
    const login = await c.startLogin();
    const query = await idp.authorize(login.authorizationUrl);
    const before = idp.tokenRequests;
    const f = await failure(c.completeLogin({ query, browserBinding: 'an-attacker-cookie' }));
    expect(f).toMatchObject({ code: 'browser_mismatch', status: 400 });
    expect((await failure(c.completeLogin({ query, browserBinding: login.browserBinding }))).code).toBe(
      'unknown_state',
    );
    expect(idp.tokenRequests).toBe(before);
  });

  it('rejects an expired login', async () => {
    const c = client({ pendingTtl: 60_000 });
    const login = await c.startLogin();
    const query = await idp.authorize(login.authorizationUrl);
    time.advance(60_000);
    expect((await failure(c.completeLogin({ query, browserBinding: login.browserBinding }))).code).toBe(
      'unknown_state',
    );
  });

  it('checks iss (RFC 9207): a different or missing issuer is refused', async () => {
    const c = client();
    for (const mutate of [
      (q: URLSearchParams) => q.set('iss', 'https://evil.example'),
      (q: URLSearchParams) => q.delete('iss'),
    ]) {
      const login = await c.startLogin();
      const query = await idp.authorize(login.authorizationUrl);
      mutate(query);
      const f = await failure(c.completeLogin({ query, browserBinding: login.browserBinding }));
      expect(['issuer_mismatch', 'missing_issuer']).toContain(f.code);
    }
  });

  it('turns a provider error redirect into a clear 400 without a token request', async () => {
    const c = client();
    const login = await c.startLogin();
    const query = new URLSearchParams({
      error: 'access_denied',
      error_description: 'End-User aborted',
      state: login.state,
      iss: idp.issuer,
    });
    const before = idp.tokenRequests;
    const f = await failure(c.completeLogin({ query, browserBinding: login.browserBinding }));
    expect(f).toMatchObject({ code: 'provider_error', status: 400, providerError: 'access_denied' });
    expect(idp.tokenRequests).toBe(before);
  });

  it('refuses oversized and malformed parameters, and open redirects through the return path', async () => {
    const c = client();
    const login = await c.startLogin();
    const huge = new URLSearchParams({ state: login.state, code: 'c'.repeat(10_000) });
    expect((await failure(c.completeLogin({ query: huge, browserBinding: login.browserBinding }))).code).toBe(
      'malformed_callback',
    );
    const bad = new URLSearchParams({ state: '<script>', code: 'c' });
    expect((await failure(c.completeLogin({ query: bad, browserBinding: login.browserBinding }))).code).toBe(
      'malformed_callback',
    );
    for (const returnTo of ['https://evil.example/', '//evil.example', '/\\evil.example', 'javascript:alert(1)']) {
      expect((await failure(c.startLogin({ returnTo }))).code).toBe('invalid_return_to');
    }
  });

  it('retries a 503 and a 429 (honouring Retry-After) at the token endpoint, then succeeds', async () => {
    const c = client();
    const login = await c.startLogin();
    const query = await idp.authorize(login.authorizationUrl);
    idp.faults.push('503', '429');
    const before = idp.tokenRequests;
    const done = await drive(c.completeLogin({ query, browserBinding: login.browserBinding }));
    expect(done.claims.sub).toBe('alice');
    expect(idp.tokenRequests - before).toBe(3);
  });

  it('retries a reset and a hung request, which never reached the provider', async () => {
    const c = client();
    const login = await c.startLogin();
    const query = await idp.authorize(login.authorizationUrl);
    idp.faults.push('reset', 'hang');
    const done = await drive(c.completeLogin({ query, browserBinding: login.browserBinding }));
    expect(done.claims.sub).toBe('alice');
  });

  it('never retries invalid_grant, and never counts it in the circuit breaker', async () => {
    const c = client();
    for (let i = 0; i < 8; i++) {
      const login = await c.startLogin();
      const query = await idp.authorize(login.authorizationUrl);
      query.set('code', 'forged-code');
      const before = idp.tokenRequests;
      const f = await failure(c.completeLogin({ query, browserBinding: login.browserBinding }));
      expect(f).toMatchObject({ code: 'invalid_grant', status: 400, providerError: 'invalid_grant' });
      expect(idp.tokenRequests - before).toBe(1);
    }
    // Eight refused codes later the breaker (threshold 5) is still closed: a real login works.
    const login = await c.startLogin();
    const query = await idp.authorize(login.authorizationUrl);
    await expect(drive(c.completeLogin({ query, browserBinding: login.browserBinding }))).resolves.toBeDefined();
  });

  it('reports a code spent by an attempt whose answer was lost as code_consumed (start again), not as a retryable failure', async () => {
    const c = client();
    const login = await c.startLogin();
    const query = await idp.authorize(login.authorizationUrl);
    idp.faults.push('drop');
    const before = idp.tokenRequests;
    const f = await failure(c.completeLogin({ query, browserBinding: login.browserBinding }));
    expect(f).toMatchObject({ code: 'code_consumed', status: 400, providerError: 'invalid_grant' });
    expect(idp.tokenRequests - before).toBe(2); // the lost one and exactly one retry
  });

  it('makes exactly one token request for concurrent callbacks with one state', async () => {
    const c = client();
    const login = await c.startLogin();
    const query = await idp.authorize(login.authorizationUrl);
    const before = idp.tokenRequests;
    const results = await drive(
      Promise.allSettled(
        Array.from({ length: 10 }, () => c.completeLogin({ query, browserBinding: login.browserBinding })),
      ),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect(idp.tokenRequests - before).toBe(1);
  });

  it('refreshes single-flight per session, follows rotation, and ends the session on invalid_grant', async () => {
    const c = client();
    const login = await c.startLogin();
    const query = await idp.authorize(login.authorizationUrl);
    const { tokens } = await drive(c.completeLogin({ query, browserBinding: login.browserBinding }));
    const before = idp.tokenRequests;
    const refreshed = await drive(
      Promise.all(Array.from({ length: 5 }, () => c.refresh('session-1', tokens.refreshToken!))),
    );
    expect(idp.tokenRequests - before).toBe(1);
    expect(new Set(refreshed.map((t) => t.refreshToken)).size).toBe(1);
    expect(refreshed[0].refreshToken).not.toBe(tokens.refreshToken); // rotated
    const f = await failure(c.refresh('session-1', tokens.refreshToken!)); // the rotated-out token
    expect(f).toMatchObject({ code: 'session_ended', status: 401 });
  });

  it('refuses plain PKCE and insecure URLs at start-up, listing every problem', () => {
    expect(
      () => new OAuthClient({ issuer: 'http://idp.example', clientId: '', redirectUri: 'nope', pkceMethod: 'plain' }),
    ).toThrow(ResilienceValidationError);
    try {
      new OAuthClient({ issuer: 'http://idp.example', clientId: 'x', redirectUri: 'nope', pkceMethod: 'plain' });
    } catch (error) {
      expect((error as Error).message).toMatch(
        /pkceMethod: "plain" must be "S256"[\s\S]*issuer: "http:\/\/idp.example" must be https[\s\S]*redirectUri: "nope" must be an absolute URL/,
      );
    }
  });

  it('never puts the verifier, tokens or client secret into an error', async () => {
    const c = client();
    const login = await c.startLogin();
    const query = await idp.authorize(login.authorizationUrl);
    query.set('code', 'forged');
    const f = await failure(c.completeLogin({ query, browserBinding: login.browserBinding }));
    const text = `${f.message} ${JSON.stringify(f)} ${String(f.stack)}`;
    expect(text).not.toContain(idp.clientSecret);
    expect(text).not.toContain(login.browserBinding);
  });
});

describe('OAuthClient edge cases', () => {
  it('refuses a provider that does not advertise S256, unless allowed explicitly', async () => {
    const { createServer } = await import('node:http');
    const server = createServer((req, res) => {
      const issuer = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          issuer,
          authorization_endpoint: `${issuer}/authorize`,
          token_endpoint: `${issuer}/token`,
          jwks_uri: `${issuer}/jwks`,
        }),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const issuer = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    const options = { issuer, clientId: 'c', redirectUri: 'http://127.0.0.1/cb', allowInsecureRequests: true };
    await expect(new OAuthClient(options).startLogin()).rejects.toMatchObject({ code: 'discovery_failed' });
    const allowed = await new OAuthClient({ ...options, allowProviderWithoutS256: true }).startLogin();
    expect(allowed.authorizationUrl).toContain('code_challenge_method=S256');
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('keeps tokens out of telemetry', async () => {
    const idp = await new TestIdentityProvider(REDIRECT_URI).start();
    const seen: string[] = [];
    const pipeline = new ResiliencePipelineBuilder({
      telemetryListeners: [{ write: (event) => seen.push(JSON.stringify(event.arguments)) }],
    })
      .addRetry({ delay: 0, shouldHandle: handleTransientTokenFailure })
      .build();
    const c = clientOf(idp, { pipeline });
    try {
      const login = await c.startLogin();
      const done = await c.completeLogin({
        query: await idp.authorize(login.authorizationUrl),
        browserBinding: login.browserBinding,
      });
      const all = seen.join('\n');
      expect(all).toContain('[redacted]');
      expect(all).not.toContain(done.tokens.accessToken);
      expect(all).not.toContain(done.tokens.refreshToken!);
    } finally {
      await idp.stop();
    }
  });
});
