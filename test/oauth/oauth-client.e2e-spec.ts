import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { decodeJwt } from 'jose';
import { ResiliencePipelineBuilder, ResilienceValidationError } from '../../src/index.js';
import {
  defaultTokenPipeline,
  handleTransientTokenFailure,
  InMemoryPendingAuthorizationStore,
  OAuthClient,
  OAuthFailure,
  type OAuthClientOptions,
} from '../../src/oauth/index.js';
import { FakeTimeProvider } from '../../src/testing/index.js';
import { driveWithClock } from '../utils/drive.js';
import { TestIdentityProvider, type IdTokenTamper } from '../utils/identity-provider.js';
import { LineLogger } from '../utils/line.logger.js';

const REDIRECT_URI = 'http://127.0.0.1:59999/auth/callback';
/** The test clients' per-attempt timeout: a value no other timer of theirs has. */
const ATTEMPT_TIMEOUT = 2_345;

/** Every log line of this suite, scanned at the end for every secret the providers and tests saw. */
const logs = new LineLogger();
const secrets = new Set<string>();
const providers: TestIdentityProvider[] = [];

afterAll(() => {
  for (const idp of providers) for (const s of idp.secretsSeen) secrets.add(s);
  const candidates = [...secrets].filter((s) => s.length >= 8);
  expect(candidates.length).toBeGreaterThan(50);
  expect(logs.lines.length).toBeGreaterThan(50);
  const leaks = logs.lines.filter((line) => candidates.some((secret) => line.text.includes(secret)));
  expect(leaks).toEqual([]);
});

/** A confidential client of `idp` that asks for a refresh token. */
function clientOf(idp: TestIdentityProvider, options: Partial<OAuthClientOptions> = {}): OAuthClient {
  return new OAuthClient({
    issuer: idp.issuer,
    clientId: idp.clientId,
    clientSecret: idp.clientSecret,
    redirectUri: REDIRECT_URI,
    scopes: ['openid', 'offline_access'],
    allowInsecureRequests: true,
    logger: logs,
    ...options,
  });
}

describe('OAuthClient against a real OpenID provider (oidc-provider, PKCE required)', () => {
  const idp = new TestIdentityProvider(REDIRECT_URI);
  providers.push(idp);
  const time = new FakeTimeProvider(Date.now());

  function client(overrides: Partial<OAuthClientOptions> = {}): OAuthClient {
    return clientOf(idp, {
      tokenEndpoint: idp.gatewayUrl,
      timeProvider: time,
      tokenRequests: { attemptTimeout: ATTEMPT_TIMEOUT, retryDelay: 100 },
      ...overrides,
    });
  }

  /**
   * Moves the clock only while no HTTP request is on its way (other than those the gateway holds on
   * purpose): a fake-clock timeout must never overtake a real request.
   */
  const drive = <T>(promise: Promise<T>): Promise<T> =>
    driveWithClock(promise, time, {
      mayAdvance: () =>
        idp.inFlight === 0 &&
        requestsInTransit === idp.hanging &&
        // Signing and verifying run on the thread pool, out of sight: an attempt's own timeout only
        // fires when a test lets the gateway hang on purpose.
        (time.pendingDelays[0] !== ATTEMPT_TIMEOUT || allowAttemptTimeouts),
      turns: 100,
      rounds: 2_000,
    });
  const realFetch = globalThis.fetch;
  let requestsInTransit = 0;
  let allowAttemptTimeouts = false;

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

  /** A login walked through the provider: the client, the binding and the callback query. */
  async function signedIn(c: OAuthClient, user = 'alice') {
    const login = await c.startLogin();
    secrets.add(login.browserBinding);
    const query = await idp.authorize(login.authorizationUrl, user);
    return { login, query, complete: () => c.completeLogin({ query, browserBinding: login.browserBinding }) };
  }

  beforeAll(async () => {
    globalThis.fetch = async (...args: Parameters<typeof fetch>) => {
      requestsInTransit++;
      try {
        return await realFetch(...args);
      } finally {
        requestsInTransit--;
      }
    };
    await idp.start();
  });

  afterAll(async () => {
    globalThis.fetch = realFetch;
    await idp.stop();
  });

  it('completes the authorization-code flow with PKCE S256, verifies the ID token, and logs start and completion', async () => {
    const c = client();
    const login = await c.startLogin({ returnTo: '/orders?page=2' });
    secrets.add(login.browserBinding);
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
    expect(done.correlationId).toBe(login.correlationId);
    expect(done.tokens.accessToken).toEqual(expect.any(String));
    expect(done.tokens.refreshToken).toEqual(expect.any(String));
    await expect(drive(c.userInfo(done.tokens.accessToken, 'alice'))).resolves.toMatchObject({ sub: 'alice' });
    const mine = logs.withCorrelation(login.correlationId);
    expect(mine.map((l) => l.code)).toEqual(['OAUTH_LOGIN_STARTED', 'OAUTH_LOGIN_COMPLETED']);
    expect(mine.every((l) => l.level === 'log')).toBe(true);
  });

  it('rejects a replayed, a wrong, a missing and a foreign state — without any token request', async () => {
    const c = client();
    const { login, query, complete } = await signedIn(c);
    await drive(complete());
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
    expect(
      (
        await failure(
          c.completeLogin({ query: missing, browserBinding: login.browserBinding, correlationId: 'req-42' }),
        )
      ).code,
    ).toBe('missing_state');
    expect(logs.withCorrelation('req-42')).toEqual([
      expect.objectContaining({
        level: 'warn',
        code: 'OAUTH_CALLBACK_REJECTED',
        text: expect.stringContaining('reason=missing_state'),
      }),
    ]);
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
    const { login, query } = await signedIn(c);
    const before = idp.tokenRequests;
    const f = await failure(c.completeLogin({ query, browserBinding: 'an-attacker-cookie' }));
    expect(f).toMatchObject({ code: 'browser_mismatch', status: 400 });
    expect(logs.withCorrelation(login.correlationId).at(-1)?.text).toContain('reason=browser_mismatch');
    expect((await failure(c.completeLogin({ query, browserBinding: login.browserBinding }))).code).toBe(
      'unknown_state',
    );
    expect(idp.tokenRequests).toBe(before);
  });

  it('rejects an expired login', async () => {
    const c = client({ pendingTtl: 60_000 });
    const { login, query } = await signedIn(c);
    time.advance(60_000);
    expect((await failure(c.completeLogin({ query, browserBinding: login.browserBinding }))).code).toBe(
      'unknown_state',
    );
  });

  it('checks iss (RFC 9207): a different or missing issuer is refused', async () => {
    const c = client();
    for (const [mutate, code] of [
      [(q: URLSearchParams) => q.set('iss', 'https://evil.example'), 'issuer_mismatch'],
      [(q: URLSearchParams) => q.delete('iss'), 'missing_issuer'],
    ] as const) {
      const { login, query } = await signedIn(c);
      mutate(query);
      const f = await failure(c.completeLogin({ query, browserBinding: login.browserBinding }));
      expect(f.code).toBe(code);
    }
  });

  it('refuses repeated code, state or iss with malformed_callback before any token request (RFC 6749 §3.1)', async () => {
    const c = client();
    const { login, query, complete } = await signedIn(c);
    const before = idp.tokenRequests;
    for (const name of ['code', 'state', 'iss']) {
      const repeated = new URLSearchParams(query);
      repeated.append(name, name === 'state' ? 'y'.repeat(43) : 'another-value');
      const f = await failure(c.completeLogin({ query: repeated, browserBinding: login.browserBinding }));
      expect(f).toMatchObject({ code: 'malformed_callback', status: 400, check: `repeated:${name}` });
    }
    expect(idp.tokenRequests).toBe(before);
    // The login was not touched: the genuine callback still completes.
    await expect(drive(complete())).resolves.toMatchObject({ claims: { sub: 'alice' } });
  });

  it('turns a provider error redirect into a clear 400 without a token request, validating and escaping what the provider said', async () => {
    const c = client();
    const login = await c.startLogin();
    const before = idp.tokenRequests;
    const answer = (error: string, description?: string) =>
      failure(
        c.completeLogin({
          query: new URLSearchParams({
            error,
            ...(description === undefined ? {} : { error_description: description }),
            state: login.state,
            iss: idp.issuer,
          }),
          browserBinding: login.browserBinding,
        }),
      );
    const f = await answer('access_denied', 'End-User aborted');
    expect(f).toMatchObject({
      code: 'provider_error',
      status: 400,
      providerError: 'access_denied',
      providerErrorDescription: 'End-User aborted',
    });
    expect(logs.withCorrelation(login.correlationId).map((l) => l.code)).toContain('OAUTH_PROVIDER_ERROR');

    const markup = await c.startLogin();
    const escaped = await failure(
      c.completeLogin({
        query: new URLSearchParams({
          error: '<img src=x>',
          error_description: "it's <b>bad</b>",
          state: markup.state,
          iss: idp.issuer,
        }),
        browserBinding: markup.browserBinding,
      }),
    );
    expect(escaped.providerError).toBe('&lt;img src=x&gt;');
    expect(escaped.providerErrorDescription).toBe('it&#39;s &lt;b&gt;bad&lt;/b&gt;');
    expect(escaped.message).not.toContain('<');
    expect(logs.lines.filter((l) => l.text.includes('<img'))).toEqual([]);

    // Outside the RFC 6749 §4.1.2.1 character set: the error is refused, the description dropped.
    for (const error of ['access_denied"', 'accès_refusé', 'a\\b']) {
      const bad = await c.startLogin();
      const refused = await failure(
        c.completeLogin({
          query: new URLSearchParams({ error, state: bad.state, iss: idp.issuer }),
          browserBinding: bad.browserBinding,
        }),
      );
      expect(refused).toMatchObject({ code: 'malformed_callback', check: 'error-charset' });
      expect(refused.message).not.toContain(error);
    }
    const third = await c.startLogin();
    const dropped = await failure(
      c.completeLogin({
        query: new URLSearchParams({
          error: 'access_denied',
          error_description: 'say "hi"',
          state: third.state,
          iss: idp.issuer,
        }),
        browserBinding: third.browserBinding,
      }),
    );
    expect(dropped).toMatchObject({ code: 'provider_error', providerErrorDescription: undefined });
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
    expect(logs.lines.filter((l) => l.code === 'OAUTH_LOGIN_REJECTED').length).toBeGreaterThanOrEqual(4);
  });

  it('retries a 503 and a 429 (honouring Retry-After) at the token endpoint, then succeeds', async () => {
    const c = client();
    const { complete } = await signedIn(c);
    idp.faults.push('503', '429');
    const before = idp.tokenRequests;
    const done = await drive(complete());
    expect(done.claims.sub).toBe('alice');
    expect(idp.tokenRequests - before).toBe(3);
  });

  it('honours Retry-After wherever openid-client puts the response: JSON 429 in seconds, non-JSON 503 as an HTTP-date', async () => {
    for (const fault of [
      { status: 429, body: '{"error":"too_many_requests"}', retryAfter: '3' },
      {
        status: 503,
        contentType: 'text/html',
        body: '<h1>Down</h1>',
        retryAfter: () => new Date(time.now() + 4_000).toUTCString(),
      },
      { status: 502, contentType: 'text/plain', body: 'bad gateway', retryAfter: '3' },
    ]) {
      const c = client();
      const { complete } = await signedIn(c);
      const retryAfter = typeof fault.retryAfter === 'function' ? fault.retryAfter() : fault.retryAfter;
      idp.faults.push({ ...fault, retryAfter });
      const before = idp.tokenRequests;
      const started = time.now();
      await expect(drive(complete())).resolves.toMatchObject({ claims: { sub: 'alice' } });
      expect(idp.tokenRequests - before).toBe(2);
      // The backoff alone would be ~100 ms: the wait was the server's.
      expect(time.now() - started).toBeGreaterThanOrEqual(3_000);
      expect(
        logs.lines.some((l) => l.code === 'OAUTH_TOKEN_ENDPOINT_FAILURE' && /retryAfterMs=[34]\d{3}/.test(l.text)),
      ).toBe(true);
    }
  });

  it('fails at once with 503 + Retry-After when Retry-After is past the deadline, without waiting', async () => {
    for (const retryAfter of ['120', new Date(time.now() + 3_600_000).toUTCString()]) {
      const c = client();
      const { complete } = await signedIn(c);
      idp.faults.push({ status: 503, contentType: 'text/plain', body: 'maintenance', retryAfter });
      const before = idp.tokenRequests;
      const started = time.now();
      const f = await failure(complete());
      expect(f).toMatchObject({ code: 'token_endpoint_unavailable', status: 503 });
      expect(f.retryAfter).toBeGreaterThan(100_000);
      expect(idp.tokenRequests - before).toBe(1);
      expect(time.now() - started).toBeLessThan(1_000);
    }
  });

  it('retries a reset once, and a hung request once — aborting the hung one (its socket is closed)', async () => {
    for (const fault of ['reset', 'hang'] as const) {
      const c = client();
      const { complete } = await signedIn(c);
      idp.faults.push(fault);
      const before = idp.tokenRequests;
      const closedBefore = idp.hungClosedAfter.length;
      allowAttemptTimeouts = true;
      const done = await drive(complete()).finally(() => (allowAttemptTimeouts = false));
      expect(done.claims.sub).toBe('alice');
      expect(idp.tokenRequests - before).toBe(2);
      if (fault === 'hang') expect(idp.hungClosedAfter.length - closedBefore).toBe(1);
    }
    expect(logs.lines.some((l) => l.code === 'OAUTH_TOKEN_ENDPOINT_FAILURE' && l.text.includes('class=timeout'))).toBe(
      true,
    );
    expect(logs.lines.some((l) => l.code === 'OAUTH_TOKEN_ENDPOINT_FAILURE' && l.text.includes('class=network'))).toBe(
      true,
    );
  });

  it('after an ambiguous failure (reset after sending, timeout) tries at most once more, even with retries left', async () => {
    for (const faults of [
      ['reset', 'hang', 'none'],
      ['hang', 'reset', 'none'],
      ['503', 'hang', 'hang', 'none'],
    ] as const) {
      const c = client({ tokenRequests: { attemptTimeout: ATTEMPT_TIMEOUT, retryDelay: 100, retries: 5 } });
      const { complete } = await signedIn(c);
      idp.faults.push(...faults);
      const before = idp.tokenRequests;
      allowAttemptTimeouts = true;
      const f = await failure(complete()).finally(() => (allowAttemptTimeouts = false));
      idp.faults.length = 0;
      expect(f).toMatchObject({ code: 'token_endpoint_unavailable', status: 503 });
      // A 503 answered by a gateway is no ambiguous failure: it does not count.
      expect(idp.tokenRequests - before).toBe(faults.length - 1);
    }
  });

  it('holds a pipeline of the application to one retry after an ambiguous failure too', async () => {
    const pipeline = new ResiliencePipelineBuilder({ timeProvider: time })
      .addRetry({ maxRetryAttempts: 5, delay: 100, shouldHandle: handleTransientTokenFailure })
      .addTimeout({ timeout: ATTEMPT_TIMEOUT, mode: 'aggressive' })
      .build();
    const c = client({ pipeline });
    const { complete } = await signedIn(c);
    idp.faults.push('hang', 'hang', 'hang', 'hang');
    const before = idp.tokenRequests;
    allowAttemptTimeouts = true;
    const f = await failure(complete()).finally(() => (allowAttemptTimeouts = false));
    idp.faults.length = 0;
    expect(f).toMatchObject({ code: 'token_endpoint_unavailable', status: 503 });
    expect(idp.tokenRequests - before).toBe(2);
  });

  it('never retries invalid_grant, and never counts it in the circuit breaker', async () => {
    const c = client();
    for (let i = 0; i < 8; i++) {
      const { login, query } = await signedIn(c);
      query.set('code', 'forged-code');
      const before = idp.tokenRequests;
      const f = await failure(c.completeLogin({ query, browserBinding: login.browserBinding }));
      expect(f).toMatchObject({ code: 'invalid_grant', status: 400, providerError: 'invalid_grant', returnTo: '/' });
      expect(idp.tokenRequests - before).toBe(1);
    }
    // Eight refused codes later the breaker (threshold 5) is still closed: a real login works.
    const { complete } = await signedIn(c);
    await expect(drive(complete())).resolves.toBeDefined();
  });

  it('reports invalid_client (401 + WWW-Authenticate: Basic) as 502, never retried, never counted, logged at error once per burst', async () => {
    const shared = defaultTokenPipeline(
      { breakerThreshold: 2, attemptTimeout: ATTEMPT_TIMEOUT, retryDelay: 100 },
      time,
    );
    const wrong = client({ clientSecret: 'not-the-secret-at-all', pipeline: shared, logBurstWindow: 60_000 });
    secrets.add('not-the-secret-at-all');
    const errorsBefore = logs.lines.filter((l) => l.code === 'OAUTH_INVALID_CLIENT').length;
    for (let i = 0; i < 3; i++) {
      const { complete } = await signedIn(wrong);
      const before = idp.tokenRequests;
      const f = await failure(complete());
      expect(f).toMatchObject({ code: 'invalid_client', status: 502, providerError: 'invalid_client' });
      expect(idp.tokenRequests - before).toBe(1);
    }
    const errors = () => logs.lines.filter((l) => l.code === 'OAUTH_INVALID_CLIENT').slice(errorsBefore);
    expect(errors()).toHaveLength(1);
    expect(errors()[0]).toMatchObject({ level: 'error' });
    expect(errors()[0].text).toContain('clientAuthentication=client_secret_basic');
    // Three refusals with a breaker threshold of 2, and the circuit is still closed for a correct client.
    const right = client({ pipeline: shared });
    await expect(drive(signedIn(right).then((s) => s.complete()))).resolves.toMatchObject({ claims: { sub: 'alice' } });
    // The next burst is reported again, with the count of what was suppressed.
    time.advance(60_000);
    await failure(signedIn(wrong).then((s) => s.complete()));
    expect(errors()).toHaveLength(2);
    expect(errors()[1].text).toContain('suppressedSinceLast=2');
  });

  it('reports invalid_client for client_secret_post too (a 401 without a challenge)', async () => {
    const c = client({
      clientId: idp.clients.post.clientId,
      clientSecret: 'wrong-post-secret-value',
      clientAuthentication: 'client_secret_post',
    });
    secrets.add('wrong-post-secret-value');
    const { complete } = await signedIn(c);
    const before = idp.tokenRequests;
    await expect(failure(complete())).resolves.toMatchObject({ code: 'invalid_client', status: 502 });
    expect(idp.tokenRequests - before).toBe(1);
  });

  const idTokenCases: [IdTokenTamper, string][] = [
    ['alg-none', 'alg'],
    ['wrong-aud', 'aud'],
    ['wrong-iss', 'iss'],
    ['expired', 'exp'],
    ['no-nonce', 'nonce'],
    ['wrong-nonce', 'nonce'],
    ['bad-signature', 'signature'],
    ['other-key', 'signature'],
  ];
  for (const [tamper, check] of idTokenCases) {
    it(`refuses an ID token with ${tamper} as 502 invalid_id_token, once, without tokens, logging the "${check}" check`, async () => {
      const c = client();
      const { login, complete } = await signedIn(c);
      idp.faults.push({ tamper });
      const before = idp.tokenRequests;
      const f = await failure(complete());
      expect(f).toMatchObject({ code: 'invalid_id_token', status: 502, check });
      expect(idp.tokenRequests - before).toBe(1);
      const security = logs.withCorrelation(login.correlationId).filter((l) => l.code === 'OAUTH_ID_TOKEN_REJECTED');
      expect(security).toEqual([
        expect.objectContaining({ level: 'warn', text: expect.stringContaining(`check=${check}`) }),
      ]);
      expect(logs.withCorrelation(login.correlationId).map((l) => l.code)).not.toContain('OAUTH_LOGIN_COMPLETED');
    });
  }

  for (const tamper of ['not-a-token-response', 'html-200'] as const) {
    it(`refuses a 200 that is no token response (${tamper}) as 502 invalid_token_response, never retried`, async () => {
      const c = client();
      const { login, complete } = await signedIn(c);
      idp.faults.push({ tamper });
      const before = idp.tokenRequests;
      const f = await failure(complete());
      expect(f).toMatchObject({ code: 'invalid_token_response', status: 502 });
      expect(idp.tokenRequests - before).toBe(1);
      expect(logs.withCorrelation(login.correlationId).map((l) => l.code)).toContain('OAUTH_TOKEN_RESPONSE_INVALID');
    });
  }

  it('reports a code spent by an attempt whose answer was lost as code_consumed (start again), not as a retryable failure', async () => {
    const c = client();
    const { complete } = await signedIn(c);
    idp.faults.push('drop');
    const before = idp.tokenRequests;
    const f = await failure(complete());
    expect(f).toMatchObject({ code: 'code_consumed', status: 400, providerError: 'invalid_grant' });
    expect(idp.tokenRequests - before).toBe(2); // the lost one and exactly one retry
  });

  it('makes exactly one token request for concurrent callbacks with one state', async () => {
    const c = client();
    const { login, query } = await signedIn(c);
    const before = idp.tokenRequests;
    const results = await drive(
      Promise.allSettled(
        Array.from({ length: 10 }, () => c.completeLogin({ query, browserBinding: login.browserBinding })),
      ),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    expect(idp.tokenRequests - before).toBe(1);
  });

  it('refreshes single-flight per session, follows rotation, and ends the session on invalid_grant — logging both', async () => {
    const c = client();
    const { complete } = await signedIn(c);
    const { tokens } = await drive(complete());
    const before = idp.tokenRequests;
    const refreshed = await drive(
      Promise.all(
        Array.from({ length: 5 }, () => c.refresh('session-1', tokens.refreshToken!, { correlationId: 'rf-1' })),
      ),
    );
    expect(idp.tokenRequests - before).toBe(1);
    expect(new Set(refreshed.map((t) => t.refreshToken)).size).toBe(1);
    expect(refreshed[0].refreshToken).not.toBe(tokens.refreshToken); // rotated
    expect(logs.withCorrelation('rf-1').map((l) => [l.code, l.text.includes('rotated=true')])).toEqual([
      ['OAUTH_REFRESH_ROTATED', true],
    ]);
    const f = await failure(c.refresh('session-1', tokens.refreshToken!, { correlationId: 'rf-2' })); // the rotated-out token
    expect(f).toMatchObject({ code: 'session_ended', status: 401 });
    expect(logs.withCorrelation('rf-2').map((l) => l.code)).toEqual(['OAUTH_SESSION_ENDED']);
  });

  it('verifies the ID token of a refresh as at sign-in and for the same user', async () => {
    const c = client();
    const { complete } = await signedIn(c, 'ada');
    const { tokens, claims } = await drive(complete());
    const refreshed = await drive(c.refresh('session-ok', tokens.refreshToken!, { subject: claims.sub }));
    expect(refreshed.idToken).toEqual(expect.any(String));
    expect(decodeJwt(refreshed.idToken!).sub).toBe('ada');
  });

  const refreshCases: [IdTokenTamper, string][] = [
    ['alg-none', 'alg'],
    ['bad-signature', 'signature'],
    ['other-key', 'signature'],
    ['wrong-aud', 'aud'],
    ['wrong-iss', 'iss'],
    ['expired', 'exp'],
    ['wrong-sub', 'sub'],
  ];
  for (const [tamper, check] of refreshCases) {
    it(`refuses a refresh whose ID token has ${tamper} as 502 invalid_id_token, handing out no token`, async () => {
      const c = client();
      const { complete } = await signedIn(c, 'ada');
      const { tokens, claims } = await drive(complete());
      idp.faults.push({ tamper });
      const correlationId = `rf-${tamper}`;
      const f = await failure(
        c.refresh(`session-${tamper}`, tokens.refreshToken!, { correlationId, subject: claims.sub }),
      );
      expect(f).toMatchObject({ code: 'invalid_id_token', status: 502, check });
      expect(logs.withCorrelation(correlationId).map((l) => l.code)).toEqual([
        'OAUTH_REFRESH_FAILED',
        'OAUTH_ID_TOKEN_REJECTED',
      ]);
    });
  }

  it('authenticates with client_secret_post, private_key_jwt (jose) and none', async () => {
    const { post, privateKeyJwt, none } = idp.clients;
    for (const options of [
      { clientId: post.clientId, clientSecret: post.clientSecret, clientAuthentication: 'client_secret_post' as const },
      { clientId: privateKeyJwt.clientId, clientSecret: undefined, clientPrivateKey: privateKeyJwt.privateKey },
      { clientId: none.clientId, clientSecret: undefined, clientAuthentication: 'none' as const },
    ]) {
      const c = client(options);
      const { complete } = await signedIn(c, 'bob');
      const done = await drive(complete());
      expect(done.claims).toMatchObject({ sub: 'bob', aud: options.clientId });
      await expect(drive(c.refresh(`s-${options.clientId}`, done.tokens.refreshToken!))).resolves.toMatchObject({
        accessToken: expect.any(String),
      });
    }
  });

  it('builds the logout URL with client_id and post_logout_redirect_uri (+ logout_hint); id_token_hint only when opted in', async () => {
    const postLogout = new URL('/signed-out', REDIRECT_URI).href;
    const c = client({ postLogoutRedirectUri: postLogout });
    const done = await drive((await signedIn(c)).complete());
    const url = new URL((await c.logoutUrl({ idToken: done.tokens.idToken, logoutHint: 'alice' }))!);
    expect(url.pathname).toBe('/session/end');
    expect(Object.fromEntries(url.searchParams)).toEqual({
      client_id: idp.clientId,
      post_logout_redirect_uri: postLogout,
      logout_hint: 'alice',
    });
    // The provider accepts it: its sign-out confirmation page, not an error.
    const page = await fetch(url, { redirect: 'manual' });
    expect(page.status).toBe(200);
    await expect(page.text()).resolves.toMatch(/logout|sign-?out/i);

    const optedIn = client({ postLogoutRedirectUri: postLogout, logoutWithIdTokenHint: true });
    const hinted = new URL((await optedIn.logoutUrl({ idToken: done.tokens.idToken }))!);
    expect(hinted.searchParams.get('id_token_hint')).toBe(done.tokens.idToken);
  });

  it('refuses plain PKCE, insecure URLs and incomplete client authentication at start-up, listing every problem', () => {
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
    const base = { issuer: 'https://idp.example', clientId: 'x', redirectUri: 'https://app.example/cb' };
    expect(() => new OAuthClient({ ...base, clientAuthentication: 'client_secret_post' })).toThrow(
      /clientSecret: undefined is required for clientAuthentication "client_secret_post"/,
    );
    expect(() => new OAuthClient({ ...base, clientAuthentication: 'private_key_jwt' })).toThrow(
      /clientPrivateKey: undefined must be a private JWK or a PKCS#8 PEM/,
    );
    expect(() => new OAuthClient({ ...base, clientSecret: 'leaky-secret', clientAuthentication: 'none' })).toThrow(
      /clientSecret: "\[redacted\]" must not be set/,
    );
    expect(
      () => new OAuthClient({ ...base, tokenRequests: { retries: -1, deadline: 100, attemptTimeout: 500 } }),
    ).toThrow(/tokenRequests.retries[\s\S]*tokenRequests.attemptTimeout: 500 must not exceed the deadline/);
  });

  it('never puts the verifier, tokens or client secret into an error', async () => {
    const c = client();
    const { login, query } = await signedIn(c);
    query.set('code', 'forged');
    const f = await failure(c.completeLogin({ query, browserBinding: login.browserBinding }));
    const text = `${f.message} ${JSON.stringify(f)} ${String(f.stack)}`;
    expect(text).not.toContain(idp.clientSecret);
    expect(text).not.toContain(login.browserBinding);
  });
});

describe('OAuthClient and the provider metadata', () => {
  const servers: Server[] = [];
  afterAll(async () => {
    for (const s of servers) {
      s.closeAllConnections();
      await new Promise((resolve) => s.close(resolve));
    }
  });

  /** A discovery endpoint of our own: `answer` gets the request count and the issuer. */
  async function metadataServer(answer: (n: number, issuer: string) => { status: number; body: unknown }) {
    let requests = 0;
    const server = createServer((req, res) => {
      const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const { status, body } = answer(++requests, issuer);
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return { issuer: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests: () => requests };
  }

  const metadata = (issuer: string, extra: Record<string, unknown> = {}) => ({
    issuer,
    authorization_endpoint: `${issuer}/authorize`,
    token_endpoint: `${issuer}/token`,
    jwks_uri: `${issuer}/jwks`,
    end_session_endpoint: `${issuer}/logout`,
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['client_secret_basic', 'none'],
    ...extra,
  });

  it('discovers at start-up: init() fails clearly for a wrong issuer', async () => {
    const { issuer } = await metadataServer(() => ({ status: 200, body: metadata('http://127.0.0.1:1') }));
    const lines = new LineLogger();
    const c = new OAuthClient({
      issuer,
      clientId: 'c',
      redirectUri: 'http://127.0.0.1/cb',
      allowInsecureRequests: true,
      logger: lines,
    });
    const error = await c.init().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ code: 'provider_mismatch', status: 502 });
    expect((error as Error).message).toMatch(
      /discovery document of http:\/\/127\.0\.0\.1:\d+ announces another issuer/,
    );
    expect(lines.lines).toEqual([expect.objectContaining({ level: 'error', code: 'OAUTH_DISCOVERY_FAILED' })]);
  });

  it('refuses a provider that does not advertise S256, unless allowed explicitly', async () => {
    const { issuer } = await metadataServer((_, iss) => ({
      status: 200,
      body: metadata(iss, { code_challenge_methods_supported: undefined }),
    }));
    const options = {
      issuer,
      clientId: 'c',
      redirectUri: 'http://127.0.0.1/cb',
      allowInsecureRequests: true,
      logger: logs,
    };
    await expect(new OAuthClient(options).startLogin()).rejects.toMatchObject({
      code: 'provider_mismatch',
      status: 502,
    });
    await expect(new OAuthClient(options).init()).rejects.toThrow(/S256/);
    const allowed = await new OAuthClient({ ...options, allowProviderWithoutS256: true }).startLogin();
    expect(allowed.authorizationUrl).toContain('code_challenge_method=S256');
  });

  it('fails the start naming both lists when the provider does not offer the client authentication method', async () => {
    const { issuer } = await metadataServer((_, iss) => ({
      status: 200,
      body: metadata(iss, { token_endpoint_auth_methods_supported: ['client_secret_basic', 'private_key_jwt'] }),
    }));
    const c = new OAuthClient({
      issuer,
      clientId: 'c',
      clientSecret: 'some-post-secret',
      clientAuthentication: 'client_secret_post',
      redirectUri: 'http://127.0.0.1/cb',
      allowInsecureRequests: true,
      logger: logs,
    });
    const error = await c.init().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ResilienceValidationError);
    expect((error as Error).message).toMatch(
      /oauth\.clientAuthentication: "client_secret_post" is not supported by the provider: its token_endpoint_auth_methods_supported are \[client_secret_basic, private_key_jwt\]; this client implements \[client_secret_basic, client_secret_post, private_key_jwt, none\]/,
    );
    // Deferred to the first login, the same mismatch is a 502 — and the details stay in the log.
    const lazy = await c.startLogin().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(lazy).toMatchObject({
      code: 'provider_mismatch',
      status: 502,
      message: 'The provider does not fit this client.',
    });
  });

  it('retries a failing discovery through the pipeline, logs it, and tries again on the next call', async () => {
    const { issuer, requests } = await metadataServer((n, iss) =>
      n <= 2 ? { status: 503, body: { error: 'unavailable' } } : { status: 200, body: metadata(iss) },
    );
    const lines = new LineLogger();
    const pipeline = new ResiliencePipelineBuilder()
      .addRetry({ maxRetryAttempts: 1, delay: 0, shouldHandle: handleTransientTokenFailure })
      .build();
    const c = new OAuthClient({
      issuer,
      clientId: 'c',
      redirectUri: 'http://127.0.0.1/cb',
      allowInsecureRequests: true,
      pipeline,
      logger: lines,
    });
    await expect(c.startLogin()).rejects.toMatchObject({ code: 'discovery_failed', status: 503 });
    expect(requests()).toBe(2); // the first attempt and one retry
    expect(lines.lines).toEqual([
      expect.objectContaining({
        level: 'error',
        code: 'OAUTH_DISCOVERY_FAILED',
        text: expect.stringContaining('http-5xx'),
      }),
    ]);
    await expect(c.startLogin()).resolves.toMatchObject({
      authorizationUrl: expect.stringContaining(`${issuer}/authorize`),
    });
    expect(requests()).toBe(3);
    expect(lines.lines.map((l) => l.code)).toEqual([
      'OAUTH_DISCOVERY_FAILED',
      'OAUTH_DISCOVERY_COMPLETED',
      'OAUTH_LOGIN_STARTED',
    ]);
  });

  it('keeps tokens out of telemetry', async () => {
    const idp = await new TestIdentityProvider(REDIRECT_URI).start();
    providers.push(idp);
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

describe('OAuthClient against a token endpoint that accepts and never answers (real sockets, real time)', () => {
  const idp = new TestIdentityProvider(REDIRECT_URI);
  providers.push(idp);
  /** For each token request: when it arrived and when its socket closed (performance.now()). */
  const requests: { arrived: number; closed?: number }[] = [];
  const hung = createServer((req) => {
    const seen: { arrived: number; closed?: number } = { arrived: performance.now() };
    requests.push(seen);
    req.resume();
    req.socket.once('close', () => (seen.closed = performance.now()));
  });

  beforeAll(async () => {
    await idp.start();
    await new Promise<void>((resolve) => hung.listen(0, '127.0.0.1', resolve));
  });

  afterAll(async () => {
    hung.closeAllConnections();
    await new Promise((resolve) => hung.close(resolve));
    await idp.stop();
  });

  it('aborts each timed-out request (the server sees its socket closed within timeout + 1 s) and tries at most twice', async () => {
    const timeout = 300;
    const c = clientOf(idp, {
      tokenEndpoint: `http://127.0.0.1:${(hung.address() as AddressInfo).port}/token`,
      tokenRequests: { attemptTimeout: timeout, retryDelay: 10, retries: 4, deadline: 20_000 },
    });
    const login = await c.startLogin();
    secrets.add(login.browserBinding);
    const query = await idp.authorize(login.authorizationUrl);
    const error = await c.completeLogin({ query, browserBinding: login.browserBinding }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'token_endpoint_unavailable', status: 503 });
    expect(requests.length).toBeGreaterThanOrEqual(1);
    expect(requests.length).toBeLessThanOrEqual(2);
    // Generous bound for a loaded machine: every socket must be closed well before openid-client's own 30 s.
    for (let waited = 0; waited < 10_000 && requests.some((r) => r.closed === undefined); waited += 50) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    for (const r of requests) {
      expect(r.closed).toBeDefined();
      expect(r.closed! - r.arrived).toBeLessThan(timeout + 1_000);
    }
  });
});

describe('OAuthClient pending logins: one per browser, caps per address and overall, store failures', () => {
  const idp = new TestIdentityProvider(REDIRECT_URI);
  providers.push(idp);
  const time = new FakeTimeProvider(Date.now());

  beforeAll(async () => {
    await idp.start();
  });

  afterAll(async () => {
    await idp.stop();
  });

  it('keeps one pending login per binding cookie: many starts from one browser leave one entry, and only the newest completes', async () => {
    const store = new InMemoryPendingAuthorizationStore(time);
    const c = clientOf(idp, { pendingStore: store, timeProvider: time, tokenEndpoint: idp.gatewayUrl });
    const first = await c.startLogin({ clientAddress: '198.51.100.7' });
    secrets.add(first.browserBinding);
    let last = first;
    for (let i = 0; i < 200; i++) {
      last = await c.startLogin({ browserBinding: first.browserBinding, clientAddress: '198.51.100.7' });
      expect(last.browserBinding).toBe(first.browserBinding);
    }
    expect(store.size).toBe(1);
    const stale = await idp.authorize(first.authorizationUrl);
    await expect(c.completeLogin({ query: stale, browserBinding: first.browserBinding })).rejects.toMatchObject({
      code: 'unknown_state',
    });
    const query = await idp.authorize(last.authorizationUrl);
    await expect(c.completeLogin({ query, browserBinding: last.browserBinding })).resolves.toMatchObject({
      claims: { sub: 'alice' },
    });
    expect(store.size).toBe(0);
  });

  it('refuses past the per-address cap with 429 and past the overall cap with 503, each with Retry-After, logged once per burst', async () => {
    const lines = new LineLogger();
    const store = new InMemoryPendingAuthorizationStore(time);
    const c = clientOf(idp, {
      pendingStore: store,
      timeProvider: time,
      logger: lines,
      pendingTtl: 60_000,
      pendingLimits: { perAddress: 3, total: 5 },
    });
    for (let i = 0; i < 3; i++) await c.startLogin({ clientAddress: '203.0.113.9' });
    for (let i = 0; i < 3; i++) {
      await expect(c.startLogin({ clientAddress: '203.0.113.9' })).rejects.toMatchObject({
        code: 'too_many_logins',
        status: 429,
        retryAfter: 60_000,
      });
    }
    await c.startLogin({ clientAddress: '203.0.113.10' });
    await c.startLogin();
    await expect(c.startLogin({ clientAddress: '203.0.113.11' })).rejects.toMatchObject({
      code: 'login_capacity',
      status: 503,
    });
    expect(store.size).toBe(5);
    const refusals = lines.lines.filter((l) => l.code === 'OAUTH_LOGIN_REJECTED');
    expect(refusals.map((l) => /reason=(\w+)/.exec(l.text)?.[1])).toEqual(['too_many_logins', 'login_capacity']);
    // Expired logins free their places.
    time.advance(60_000);
    await expect(c.startLogin({ clientAddress: '203.0.113.9' })).resolves.toBeDefined();
  });

  it("answers 503 store_unavailable (with the store's Retry-After) when the store fails, on start and callback, logged once per burst", async () => {
    const lines = new LineLogger();
    const broken = {
      save: () => Promise.reject(Object.assign(new Error('connection refused'), { retryAfter: 2_000 })),
      take: () => Promise.reject(new Error('connection refused')),
    };
    const c = clientOf(idp, { pendingStore: broken, timeProvider: time, logger: lines });
    for (let i = 0; i < 3; i++) {
      await expect(c.startLogin()).rejects.toMatchObject({ code: 'store_unavailable', status: 503, retryAfter: 2_000 });
    }
    const query = new URLSearchParams({ code: 'c', state: 's'.repeat(43), iss: idp.issuer });
    await expect(c.completeLogin({ query, browserBinding: 'b'.repeat(43) })).rejects.toMatchObject({
      code: 'store_unavailable',
      status: 503,
    });
    expect(lines.lines.filter((l) => l.code === 'OAUTH_STORE_UNAVAILABLE')).toEqual([
      expect.objectContaining({ level: 'error' }),
    ]);
  });
});
