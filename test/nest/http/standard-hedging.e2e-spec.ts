import 'reflect-metadata';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { Test, type TestingModule } from '@nestjs/testing';
import type { AxiosError, AxiosResponse } from 'axios';
import {
  BrokenCircuitError,
  isResilienceValidationError,
  ResilienceModule,
  TimeoutRejectedError,
  type ResilienceEvent,
  type TelemetryListener,
} from '../../../src/index.js';
import {
  EndpointRouter,
  getResilientHttpClientToken,
  HTTP_ENDPOINT,
  ResilientHttpModule,
  STANDARD_HEDGING_HANDLER_DEFAULTS,
  type ResilientHttpClient,
  type StandardHedgingHandlerOptions,
} from '../../../src/nest/http/index.js';
import { FakeTimeProvider } from '../../../src/testing/index.js';
import { turns } from '../../utils/flaky.js';
import { hang, held, json, Replica, seededRandom } from './replica.server.js';

describe('The standard hedging handler against three real replicas', () => {
  const replicas = { a: new Replica('a'), b: new Replica('b'), c: new Replica('c') };
  const { a, b, c } = replicas;
  const events: ResilienceEvent[] = [];
  const listener: TelemetryListener = { write: (event) => void events.push(event) };
  const modules: TestingModule[] = [];

  const ordered = (...rs: Replica[]) => ({ groups: rs.map((r) => ({ endpoints: [`${r.url}/api`] })) });

  async function client(
    hedging: StandardHedgingHandlerOptions,
    extra = {},
    timeProvider?: FakeTimeProvider,
  ): Promise<ResilientHttpClient> {
    const moduleRef = await Test.createTestingModule({
      imports: [
        ResilienceModule.forRoot({ telemetryListeners: [listener], timeProvider }),
        ResilientHttpModule.register({ name: 'replicas', hedging, ...extra }),
      ],
    }).compile();
    modules.push(moduleRef);
    return moduleRef.get<ResilientHttpClient>(getResilientHttpClientToken('replicas'));
  }

  beforeAll(async () => {
    await Promise.all(Object.values(replicas).map((r) => r.start()));
  });

  afterEach(async () => {
    await Promise.all(modules.splice(0).map((m) => m.close()));
    for (const r of Object.values(replicas)) {
      r.hits = 0;
      r.aborted = 0;
      r.abortedAt.length = 0;
      r.bodies.length = 0;
      r.paths.length = 0;
      r.handler = (_req, res) => json(res, 200, { server: r.name });
    }
    events.length = 0;
  });

  afterAll(async () => {
    await Promise.all(Object.values(replicas).map((r) => r.stop()));
  });

  it("follows Microsoft's defaults", () => {
    expect(STANDARD_HEDGING_HANDLER_DEFAULTS).toEqual({
      totalTimeout: 30_000,
      hedging: { maxHedgedAttempts: 1, mode: 'latency', delay: 2_000 },
      endpoint: {
        rateLimiter: { kind: 'concurrency', permitLimit: 1_000, queueLimit: 0 },
        circuitBreaker: {
          kind: 'time-window',
          failureRatio: 0.1,
          minimumThroughput: 100,
          samplingDuration: 30_000,
          breakDuration: 5_000,
        },
        attemptTimeout: 10_000,
      },
    });
  });

  it('latency mode: a slow primary is hedged after the delay, the fast answer wins and the slow socket is closed', async () => {
    // The primary never answers; the clock is the fake one and moves only when the test moves it.
    const time = new FakeTimeProvider(Date.now());
    a.handler = hang;
    const http = await client({ routing: ordered(a, b, c), hedging: { delay: 100, maxHedgedAttempts: 2 } }, {}, time);
    for (let i = 1; i <= 5; i++) {
      const response = http.get<{ server: string }>(`/items/${i}?q=${i}`);
      await a.hitCount(i);
      await time.advanceAsync(99);
      expect(time.pendingDelays[0]).toBe(1); // the hedge is due at exactly the delay
      await turns();
      expect(b.hits).toBe(i - 1); // and was not sent before it
      await time.advanceAsync(1);
      expect((await response).data).toEqual({ server: 'b' }); // the second hedge (at 200 ms) never came
      await a.abortedCount(i); // the loser's connection is destroyed, not left to hang
    }
    expect([a.hits, b.hits, c.hits]).toEqual([5, 5, 0]);
    // Each attempt went to its endpoint's base path with the request's path and query.
    expect(b.paths).toEqual([1, 2, 3, 4, 5].map((i) => `/api/items/${i}?q=${i}`));
  });

  it('latency mode: concurrent requests all answer though the slow replica never does', async () => {
    const time = new FakeTimeProvider(Date.now());
    a.handler = hang;
    const http = await client({ routing: ordered(a, b, c), hedging: { delay: 100 } }, {}, time);
    const responses = Promise.all([...Array(20).keys()].map((i) => http.get(`/c/${i}`)));
    await a.hitCount(20);
    await time.advanceAsync(100);
    expect((await responses).map((r) => r.data)).toEqual(Array(20).fill({ server: 'b' }));
    expect([a.hits, b.hits, c.hits]).toEqual([20, 20, 0]);
    await a.abortedCount(20);
  });

  it('a delay of 0 sends to every planned endpoint at once; the first answer wins', async () => {
    a.handler = hang;
    c.handler = hang;
    // b answers once the other two requests have reached their replicas: all three were sent at once.
    b.handler = (_req, res) =>
      void Promise.all([a.hitCount(1), c.hitCount(1)]).then(() => json(res, 200, { server: 'b' }));
    // The clock never moves: nothing waits on a delay.
    const time = new FakeTimeProvider(Date.now());
    const http = await client({ routing: ordered(a, b, c), hedging: { delay: 0, maxHedgedAttempts: 2 } }, {}, time);
    expect((await http.get('/x')).data).toEqual({ server: 'b' });
    expect([a.hits, b.hits, c.hits]).toEqual([1, 1, 1]);
    await Promise.all([a.abortedCount(1), c.abortedCount(1)]);
  });

  it('a replica answering 503: its circuit opens, then it is skipped without a request or a wait', async () => {
    a.handler = (_req, res) => json(res, 503, { server: 'a' });
    // The default hedging delay is 2 s and the fake clock never moves: a failure hedges at once, an open
    // circuit costs nothing (a wait for the delay would never end).
    const time = new FakeTimeProvider(Date.now());
    const http = await client(
      {
        routing: ordered(a, b, c),
        endpoint: { circuitBreaker: { kind: 'consecutive', failureThreshold: 3, breakDuration: 60_000 } },
      },
      {},
      time,
    );
    for (let i = 0; i < 10; i++) {
      expect((await http.get<{ server: string }>('/x')).data).toEqual({ server: 'b' });
    }
    expect([a.hits, b.hits, c.hits]).toEqual([3, 10, 0]);
    // Telemetry names the endpoint of each attempt (its authority only, never the path).
    const attempts = events.filter((e) => e.eventName === 'OnEndpointAttempt');
    const named = attempts.map((e) =>
      e.eventName === 'OnEndpointAttempt' ? [e.arguments.endpoint, e.arguments.skipped, e.severity] : [],
    );
    expect(named.filter(([endpoint]) => endpoint === a.authority)).toEqual([
      ...Array(3).fill([a.authority, false, 'warning']),
      ...Array(7).fill([a.authority, true, 'warning']),
    ]);
    expect(named.filter(([endpoint]) => endpoint === b.authority)).toEqual(
      Array(10).fill([b.authority, false, 'information']),
    );
    expect(attempts.every((e) => e.context.properties.get(HTTP_ENDPOINT) !== undefined)).toBe(true);
    const opened = events.filter((e) => e.eventName === 'OnCircuitOpened');
    expect(opened.map((e) => e.source.pipelineInstanceName)).toEqual([a.authority]);
    // The client exposes each endpoint's pipeline: the bad one's circuit is open, the others' are not.
    await expect(http.pipelineFor(a.url).execute(() => Promise.resolve(1))).rejects.toBeInstanceOf(BrokenCircuitError);
    await expect(http.pipelineFor(`${c.url}/any`).execute(() => Promise.resolve(1))).resolves.toBe(1);
  });

  it('all three failing: one attempt per endpoint, then the last failure', async () => {
    for (const r of [a, b, c]) r.handler = (_req, res) => json(res, 503, { server: r.name });
    // The fake clock never moves: each failure hedges at once, without the default 2 s delay.
    const time = new FakeTimeProvider(Date.now());
    const http = await client({ routing: ordered(a, b, c), hedging: { maxHedgedAttempts: 2 } }, {}, time);
    const error = (await http.get('/x').catch((e: unknown) => e)) as AxiosError<{ server: string }>;
    expect(error.response?.status).toBe(503);
    expect(error.response?.data).toEqual({ server: 'c' });
    expect([a.hits, b.hits, c.hits]).toEqual([1, 1, 1]);
  });

  it('every circuit open: the request fails with BrokenCircuitError without a request', async () => {
    for (const r of [a, b, c]) r.handler = (_req, res) => json(res, 503, { server: r.name });
    const http = await client({
      routing: ordered(a, b, c),
      hedging: { maxHedgedAttempts: 2 },
      endpoint: { circuitBreaker: { kind: 'consecutive', failureThreshold: 1, breakDuration: 60_000 } },
    });
    await expect(http.get('/x')).rejects.toMatchObject({ response: { status: 503 } });
    await expect(http.get('/x')).rejects.toBeInstanceOf(BrokenCircuitError);
    expect([a.hits, b.hits, c.hits]).toEqual([1, 1, 1]);
  });

  it('fallback mode: the next endpoint only after a failure (a per-endpoint attempt timeout counts)', async () => {
    const time = new FakeTimeProvider(Date.now());
    const slow = held((res) => json(res, 200, { server: 'a' }));
    a.handler = slow.handler;
    const http = await client(
      { routing: ordered(a, b, c), hedging: { mode: 'fallback' }, endpoint: { attemptTimeout: 1_000 } },
      {},
      time,
    );
    const slowButFine = http.get('/slow-but-fine');
    await a.hitCount(1);
    await time.advanceAsync(999); // slow, yet within the attempt timeout: no other endpoint is asked
    await turns();
    slow.release();
    expect((await slowButFine).data).toEqual({ server: 'a' });
    expect(b.hits).toBe(0);

    a.handler = hang;
    const hangs = http.get('/hangs');
    await a.hitCount(2);
    await time.advanceAsync(1_000);
    expect((await hangs).data).toEqual({ server: 'b' });
    await a.abortedCount(1);
    const timeouts = events.filter((e) => e.eventName === 'OnTimeout');
    expect(timeouts.map((e) => e.source.pipelineInstanceName)).toEqual([a.authority]);
  });

  it('per-endpoint attempt timeout: when every endpoint times out, the last timeout is the answer', async () => {
    a.handler = hang;
    b.handler = hang;
    const http = await client({
      routing: ordered(a, b),
      hedging: { mode: 'fallback' },
      endpoint: { attemptTimeout: 200 },
    });
    await expect(http.get('/x')).rejects.toBeInstanceOf(TimeoutRejectedError);
    await Promise.all([a.abortedCount(1), b.abortedCount(1)]);
  });

  it('Retry-After from one endpoint sends its traffic to the others meanwhile, without waiting', async () => {
    a.handler = (_req, res) => json(res, 503, { server: 'a' }, { 'retry-after': '60' });
    // The fake clock never moves: neither the 60 s asked for nor the 2 s hedging delay is waited.
    const time = new FakeTimeProvider(Date.now());
    const http = await client({ routing: ordered(a, b, c) }, {}, time);
    for (let i = 0; i < 3; i++) {
      expect((await http.get('/x')).data).toEqual({ server: 'b' });
    }
    expect([a.hits, b.hits]).toEqual([1, 3]);
  });

  it('Retry-After: the endpoint goes last until the time it asked for has passed', async () => {
    const time = new FakeTimeProvider(Date.now());
    a.handler = (_req, res) => json(res, 503, { server: 'a' }, { 'retry-after': '60' });
    const http = await client({ routing: ordered(a, b) }, {}, time);
    expect((await http.get('/1')).data).toEqual({ server: 'b' });
    a.handler = (_req, res) => json(res, 200, { server: 'a' });
    time.advance(59_000);
    expect((await http.get('/2')).data).toEqual({ server: 'b' });
    time.advance(1_000);
    expect((await http.get('/3')).data).toEqual({ server: 'a' });
    expect([a.hits, b.hits]).toEqual([2, 2]);
  });

  it('a client registered idempotent hedges POST too', async () => {
    const time = new FakeTimeProvider(Date.now());
    a.handler = hang;
    const http = await client({ routing: ordered(a, b), hedging: { delay: 50 } }, { idempotent: true }, time);
    const response = http.post('/orders', { id: 1 });
    await a.hitCount(1);
    await time.advanceAsync(50);
    expect((await response).data).toEqual({ server: 'b' });
    await a.abortedCount(1);
  });

  it('POST is hedged only when idempotent or carrying an Idempotency-Key; each attempt sends the same body', async () => {
    const time = new FakeTimeProvider(Date.now());
    const slow = held((res) => json(res, 200, { server: 'a' }));
    a.handler = slow.handler;
    const http = await client({ routing: ordered(a, b), hedging: { delay: 50 } }, {}, time);
    const plain = http.post('/orders', { id: 1 });
    await a.hitCount(1);
    await time.advanceAsync(50); // past the hedging delay: a plain POST still waits for its one endpoint
    await turns();
    expect(b.hits).toBe(0);
    slow.release();
    expect((await plain).data).toEqual({ server: 'a' });
    a.handler = hang;
    /** Sends a POST that `a` never answers, moves past the delay and returns who answered. */
    const hedged = async (sent: Promise<AxiosResponse>, nth: number) => {
      await a.hitCount(nth);
      await time.advanceAsync(50);
      return (await sent).data as unknown;
    };
    expect(await hedged(http.post('/orders', { id: 2 }, { idempotent: true }), 2)).toEqual({ server: 'b' });
    expect(await hedged(http.post('/orders', { id: 3 }, { headers: { 'Idempotency-Key': 'k3' } }), 3)).toEqual({
      server: 'b',
    });
    expect(b.bodies).toEqual([JSON.stringify({ id: 2 }), JSON.stringify({ id: 3 })]);
    expect(a.bodies.slice(0, 1)).toEqual([JSON.stringify({ id: 1 })]);
    await a.abortedCount(2);
    // A failing POST is not sent to another endpoint either.
    a.handler = (_req, res) => json(res, 503, { server: 'a' });
    await expect(http.post('/orders', { id: 4 })).rejects.toMatchObject({ response: { status: 503 } });
    expect(b.hits).toBe(2);
  });

  it('a 404 is an answer: it is not hedged', async () => {
    a.handler = (_req, res) => json(res, 404, { server: 'a' });
    const http = await client({ routing: ordered(a, b), hedging: { mode: 'fallback' } });
    await expect(http.get('/missing')).rejects.toMatchObject({ response: { status: 404 } });
    expect(b.hits).toBe(0);
  });

  it('the caller cancelling aborts every attempt', async () => {
    a.handler = hang;
    b.handler = hang;
    const http = await client({ routing: ordered(a, b), hedging: { delay: 50 } });
    const controller = new AbortController();
    const pending = http.get('/x', { signal: controller.signal });
    while (b.hits === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    controller.abort();
    await expect(pending).rejects.toBeDefined();
    await Promise.all([a.abortedCount(1), b.abortedCount(1)]);
  });

  it('weighted groups: the primary endpoint of each request follows a seeded random exactly', async () => {
    const routing = {
      kind: 'weighted' as const,
      groups: [
        { weight: 1, endpoints: [a.url] },
        { weight: 2, endpoints: [b.url] },
        { weight: 7, endpoints: [c.url] },
      ],
    };
    const http = await client({ routing, random: seededRandom(7) });
    const expected = new EndpointRouter(routing, seededRandom(7));
    const counts = new Map<string, number>();
    for (let i = 0; i < 40; i++) {
      const first = expected.plan()[0].authority;
      counts.set(first, (counts.get(first) ?? 0) + 1);
      await http.get('/w');
    }
    expect([a.hits, b.hits, c.hits]).toEqual([a, b, c].map((r) => counts.get(r.authority) ?? 0));
    expect(a.hits).toBeGreaterThan(0);
  });
});

describe('EndpointRouter', () => {
  const groups = [
    { weight: 1, endpoints: ['http://a.test'] },
    { weight: 2, endpoints: ['http://b.test'] },
    { weight: 7, endpoints: ['http://c.test'] },
  ];

  it('weighted: over 10,000 selections each group is chosen first within 4σ of its weight', () => {
    const router = new EndpointRouter({ kind: 'weighted', groups }, seededRandom(42));
    const n = 10_000;
    const counts = new Map<string, number>();
    for (let i = 0; i < n; i++) {
      const first = router.plan()[0].authority;
      counts.set(first, (counts.get(first) ?? 0) + 1);
    }
    for (const [authority, p] of [
      ['http://a.test', 0.1],
      ['http://b.test', 0.2],
      ['http://c.test', 0.7],
    ] as const) {
      const sigma = Math.sqrt(n * p * (1 - p));
      expect(Math.abs((counts.get(authority) ?? 0) - n * p)).toBeLessThan(4 * sigma);
    }
  });

  it('weighted: every plan visits every group once', () => {
    const router = new EndpointRouter({ kind: 'weighted', groups }, seededRandom(1));
    for (let i = 0; i < 100; i++) {
      expect(
        router
          .plan()
          .map((e) => e.authority)
          .sort(),
      ).toEqual(['http://a.test', 'http://b.test', 'http://c.test']);
    }
  });

  it('ordered: primary first, then the next groups; within a group the endpoint is drawn by weight', () => {
    const router = new EndpointRouter(
      {
        groups: [
          {
            endpoints: [
              { url: 'http://east-1.test', weight: 3 },
              { url: 'http://east-2.test', weight: 1 },
            ],
          },
          { endpoints: ['http://west.test'] },
        ],
      },
      seededRandom(3),
    );
    const n = 10_000;
    let east1 = 0;
    for (let i = 0; i < n; i++) {
      const plan = router.plan().map((e) => e.authority);
      expect(plan).toHaveLength(2);
      expect(plan[1]).toBe('http://west.test');
      if (plan[0] === 'http://east-1.test') east1++;
    }
    expect(Math.abs(east1 - n * 0.75)).toBeLessThan(4 * Math.sqrt(n * 0.75 * 0.25));
  });
});

describe('Standard hedging handler options', () => {
  it('fail the start with one error listing every problem with path, value and rule', async () => {
    const error = await Test.createTestingModule({
      imports: [
        ResilienceModule.forRoot({}),
        ResilientHttpModule.register({
          name: 'bad',
          pipeline: 'x',
          baseURL: 'http://primary.test',
          perAuthority: false,
          hedging: {
            routing: { kind: 'random' as never, groups: [{ endpoints: ['ftp://x', { url: 'http://ok', weight: 0 }] }] },
            hedging: { delay: -5, maxHedgedAttempts: 11 },
            endpoint: { attemptTimeout: 40_000 },
          },
        }),
      ],
    })
      .compile()
      .catch((e: unknown) => e);
    expect(isResilienceValidationError(error)).toBe(true);
    const issues = (error as { issues: { path: string; value: unknown; rule: string }[] }).issues;
    expect(issues.map((i) => [i.path, i.value])).toEqual([
      ['ResilientHttpModule "bad".pipeline', 'x'],
      ['ResilientHttpModule "bad".perAuthority', false],
      ['ResilientHttpModule "bad".baseURL', 'http://primary.test'],
      ['ResilientHttpModule "bad".hedging.routing.kind', 'random'],
      ['ResilientHttpModule "bad".hedging.routing.groups[0].endpoints[0]', 'ftp://x'],
      ['ResilientHttpModule "bad".hedging.routing.groups[0].endpoints[1].weight', 0],
      ['ResilientHttpModule "bad".hedging.hedging.maxHedgedAttempts', 11],
      ['ResilientHttpModule "bad".hedging.hedging.delay', -5],
      ['ResilientHttpModule "bad".hedging.endpoint.attemptTimeout', 40_000],
      ['ResilientHttpModule "bad".hedging.endpoint.circuitBreaker.samplingDuration', 30_000],
    ]);
    expect(issues.every((i) => i.rule.length > 0)).toBe(true);
  });

  it("report the strategies' own problems under the client's path", async () => {
    const error = await Test.createTestingModule({
      imports: [
        ResilienceModule.forRoot({}),
        ResilientHttpModule.register({
          name: 'breaker',
          hedging: {
            routing: { groups: [{ endpoints: ['http://a.test'] }] },
            endpoint: { circuitBreaker: { failureRatio: 2 }, rateLimiter: { permitLimit: -1 } },
          },
        }),
      ],
    })
      .compile()
      .catch((e: unknown) => e);
    expect(isResilienceValidationError(error)).toBe(true);
    const paths = (error as { issues: { path: string }[] }).issues.map((i) => i.path);
    expect(paths).toHaveLength(2); // one per strategy option
    expect(paths.every((p) => p.startsWith('ResilientHttpModule "breaker".hedging.endpoint'))).toBe(true);
    expect(paths.join('\n')).toMatch(/failureRatio[\s\S]*permitLimit|permitLimit[\s\S]*failureRatio/);
  });
});
