import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { CanActivate, ExecutionContext, INestApplication } from '@nestjs/common';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { of } from 'rxjs';
import request from 'supertest';
import type { App } from 'supertest/types.js';
import { ResiliencePipelineRegistry, ResilienceValidationError } from '../../src/index.js';
import { ResilienceAdminModule } from '../../src/nest/admin/index.js';
import { CatalogPrimaryServer, CatalogReplicaServer } from '../../sample-app/upstream/catalog-upstream.servers.js';
import { FlakyUpstreamServer } from '../../sample-app/upstream/flaky-upstream.server.js';
import { UpstreamControlGuard } from '../../sample-app/upstream/upstream-control.guard.js';
import { upstreamDashboardActions } from '../../sample-app/upstream/upstream-dashboard.actions.js';
import { UPSTREAM_MODES } from '../../sample-app/upstream/upstream-mode.model.js';
import {
  DEFAULT_UPSTREAM_MODES,
  UPSTREAM_OPTIONS,
  upstreamOptionsFromEnv,
} from '../../sample-app/upstream/upstream.options.js';
import { SampleConfigFile, startSample, withoutRetryDelays } from './sample-app.fixture.js';
import { ROOT } from './sample-cluster.fixture.js';
import { freePort } from './sample-tour.browser.js';

/** Far above the attempt timeout: a slow call only ends because its caller gives up (and then cancels it). */
const SLOW_LATENCY = 60_000;
/**
 * Long enough that a busy machine cannot outlast it between the opening and the next call (a probe would
 * then reach the upstream); the recoveries wait it out.
 */
const BREAK_DURATION = 5_000;
/** The control route is behind the admin guard: a signed-in session, or this token. */
const ADMIN_TOKEN = 'upstream-test-admin-token';
const ADMIN = { authorization: `Bearer ${ADMIN_TOKEN}` };

/**
 * Polls `check` until it holds. Real servers on loopback: no fake clock here. `deadline` only bounds a
 * stuck test; it is far above what a busy machine needs, and a passing check returns at once.
 */
async function eventually(check: () => Promise<boolean>, deadline = 30_000): Promise<void> {
  const end = Date.now() + deadline;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`condition not met within ${deadline} ms`);
    await new Promise<void>((resolve) => setTimeout(resolve, 20));
  }
}

describe('sample app: the steerable upstreams', () => {
  let app: INestApplication<App>;
  let weather: FlakyUpstreamServer;
  let primary: CatalogPrimaryServer;
  let replica: CatalogReplicaServer;
  let registry: ResiliencePipelineRegistry;
  const http = () => request.agent(app.getHttpServer()).set(ADMIN);
  const setMode = (name: string, mode: string) => http().put(`/upstreams/${name}/mode`).send({ mode }).expect(200);
  // The decorated methods naming the "weather" pipeline share one circuit (listed under the first method).
  const weatherCircuit = async () =>
    (await registry.circuits()).find((c) => c.circuitKey === 'weather/circuit-breaker')?.state;

  const config = new SampleConfigFile((doc) => {
    withoutRetryDelays(doc);
    doc.pipelines.weather.timeout = 500;
    doc.pipelines.weather.circuitBreaker = {
      ...(doc.pipelines.weather.circuitBreaker as object),
      failureThreshold: 4,
      breakDuration: BREAK_DURATION,
    };
  });

  beforeAll(async () => {
    app = await startSample(config, {
      env: { ADMIN_TOKEN },
      override: (builder) =>
        builder
          .overrideProvider(UPSTREAM_OPTIONS)
          .useValue({ slowLatency: SLOW_LATENCY, modes: DEFAULT_UPSTREAM_MODES }),
    });
    weather = app.get(FlakyUpstreamServer);
    primary = app.get(CatalogPrimaryServer);
    replica = app.get(CatalogReplicaServer);
    registry = app.get(ResiliencePipelineRegistry);
  });

  afterAll(async () => {
    await app.close();
    config.dispose();
  });

  /** After a test that opened the weather circuit: healthy again, and wait out the break. */
  async function recoverWeather(): Promise<void> {
    await setMode('weather', 'healthy');
    await eventually(async () => (await http().get('/weather/lisbon').expect(200)).body.source === 'live');
    expect(await weatherCircuit()).toBe('closed');
  }

  it('lists every upstream with its mode at start and its request count', async () => {
    const res = await http().get('/upstreams').expect(200);
    expect(res.body).toEqual([
      { name: 'weather', mode: 'transient', requests: 0, inFlight: 0, description: expect.any(String) },
      { name: 'catalog-primary', mode: 'slow', requests: 0, inFlight: 0, description: expect.any(String) },
      { name: 'catalog-replica', mode: 'healthy', requests: 0, inFlight: 0, description: expect.any(String) },
    ]);
    await http()
      .get('/upstreams/catalog-primary')
      .expect(200)
      .expect((r) => expect(r.body).toMatchObject({ name: 'catalog-primary', mode: 'slow' }));
  });

  it('lets only the admins switch an upstream: 401 without a session or the admin token', async () => {
    await request(app.getHttpServer()).put('/upstreams/weather/mode').send({ mode: 'outage' }).expect(401);
    await request(app.getHttpServer()).get('/upstreams').expect(401);
    expect((await http().get('/upstreams/weather').expect(200)).body.mode).toBe('transient');
  });

  it('answers 400 naming the modes for a bad mode, 404 for an unknown upstream, and changes nothing', async () => {
    const bad = await http().put('/upstreams/weather/mode').send({ mode: 'broken' }).expect(400);
    expect(bad.body.message).toBe('mode must be one of healthy, transient, outage, slow');
    expect(bad.body.modes).toEqual([...UPSTREAM_MODES]);
    await http().post('/upstreams/weather/mode').send({}).expect(400);
    await http().post('/upstreams/weather/mode').send('outage').expect(400);
    const unknown = await http().put('/upstreams/nowhere/mode').send({ mode: 'outage' }).expect(404);
    expect(unknown.body.message).toBe('no upstream of that name; known: weather, catalog-primary, catalog-replica');
    expect(unknown.text).not.toContain('127.0.0.1');
    await http().get('/upstreams/nowhere').expect(404);
    expect(weather.mode).toBe('transient');
  });

  it('transient: two calls in three fail in a fixed order that restarts with the mode, so the retries get through', async () => {
    await http().post('/upstreams/weather/mode').send({ mode: 'transient' }).expect(200, {
      name: 'weather',
      mode: 'transient',
      requests: weather.requestCount,
      inFlight: 0,
      description: weather.status().description,
    });
    const before = weather.requestCount;
    const res = await http().get('/weather/lisbon').expect(200);
    expect(res.body).toEqual({ city: 'lisbon', temperature: 21, sky: 'clear', source: 'live' });
    expect(weather.requestCount - before).toBe(3); // 503, 503, 200
    expect(await weatherCircuit()).toBe('closed');
  });

  it('outage: the weather route falls back and the circuit opens; healthy again, it closes after the break', async () => {
    await setMode('weather', 'outage');
    let before = weather.requestCount;
    const res = await http().get('/weather/lisbon').expect(200);
    expect(res.body).toEqual({ city: 'lisbon', temperature: null, sky: 'unknown', source: 'fallback' });
    expect(weather.requestCount - before).toBe(4); // the first call and 3 retries, each a 503
    expect(await weatherCircuit()).toBe('open');
    // While open, nothing reaches the upstream: the strict route answers 503 with Retry-After.
    before = weather.requestCount;
    const strict = await http().get('/weather/lisbon/strict').expect(503);
    // What is left of the break, in whole seconds (rounded up).
    expect(Number(strict.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(Number(strict.headers['retry-after'])).toBeLessThanOrEqual(BREAK_DURATION / 1000);
    expect(weather.requestCount).toBe(before);

    await setMode('weather', 'healthy');
    await eventually(async () => (await http().get('/weather/lisbon').expect(200)).body.source === 'live');
    expect(await weatherCircuit()).toBe('closed');
    await http().get('/weather/porto/strict').expect(200);
  });

  it('slow: every attempt times out (504 on the strict route), the slow calls are cancelled', async () => {
    await setMode('weather', 'slow');
    const before = weather.requestCount;
    const res = await http().get('/weather/lisbon/strict').expect(504);
    expect(res.body).toMatchObject({ statusCode: 504, error: 'Gateway Timeout' });
    expect(weather.requestCount - before).toBe(4);
    // Each attempt's timeout hung up on its request, which cancelled the injected latency.
    await eventually(async () => weather.inFlight === 0);
    // The route with a fallback still answers (the circuit opened on the fourth timeout).
    await http()
      .get('/weather/lisbon')
      .expect(200)
      .expect((r) => expect(r.body.source).toBe('fallback'));
    expect(await weatherCircuit()).toBe('open');
    await recoverWeather();
  });

  it('catalog: with the primary slow, the hedged attempt is served by the replica', async () => {
    expect(primary.mode).toBe('slow');
    const p = primary.requestCount;
    const r = replica.requestCount;
    const res = await http().get('/catalog/42').expect(200);
    expect(res.body).toEqual({ id: '42', name: 'item 42', servedBy: 'replica', tookMs: expect.any(Number) });
    expect(res.body.tookMs).toBeLessThan(SLOW_LATENCY);
    expect(primary.requestCount - p).toBe(1);
    expect(replica.requestCount - r).toBe(1);
    // The losing attempt was cancelled: the primary is not still sleeping on it.
    await eventually(async () => primary.inFlight === 0);
  });

  it('catalog: a healthy primary serves; a failing one is hedged at once; both failing is a 502', async () => {
    await setMode('catalog-primary', 'healthy');
    // The replica fails, so even a hedge started on a loaded machine cannot take the answer from the primary.
    await setMode('catalog-replica', 'outage');
    await http()
      .get('/catalog/7')
      .expect(200)
      .expect((r) => expect(r.body).toMatchObject({ id: '7', servedBy: 'primary' }));

    await setMode('catalog-primary', 'outage');
    await setMode('catalog-replica', 'healthy');
    await http()
      .get('/catalog/7')
      .expect(200)
      .expect((r) => expect(r.body.servedBy).toBe('replica'));

    await setMode('catalog-replica', 'transient'); // its first call fails
    const res = await http().get('/catalog/7').expect(502);
    expect(res.body.message).toBe('No catalog server answered.');
    expect(res.text).not.toContain('127.0.0.1');
    await setMode('catalog-primary', 'slow');
    await setMode('catalog-replica', 'healthy');
  });

  it("the dashboard's upstream buttons drive the control route", async () => {
    const actions = upstreamDashboardActions();
    expect(() => ResilienceAdminModule.forRoot({ unprotected: true, dashboard: { actions } })).not.toThrow();
    expect(new Set(actions.map((a) => a.group))).toEqual(
      new Set(['weather upstream', 'catalog-primary upstream', 'catalog-replica upstream']),
    );
    for (const action of actions.filter((a) => a.group === 'catalog-replica upstream')) {
      const res = await http()
        .put(action.url)
        .send(action.body as object)
        .expect(200);
      expect(res.body).toMatchObject(action.activeWhen!);
      await http()
        .get(action.stateUrl!)
        .expect(200)
        .expect((r) => expect(r.body).toMatchObject(action.activeWhen!));
    }
    await setMode('catalog-replica', 'healthy');
  });
});

describe('sample app: the upstream settings', () => {
  it('reads the modes at start and the slow latency from the environment, one error for every bad value', () => {
    expect(upstreamOptionsFromEnv({})).toEqual({ slowLatency: 3_000, modes: DEFAULT_UPSTREAM_MODES });
    expect(
      upstreamOptionsFromEnv({
        UPSTREAM_SLOW_MS: '5000',
        UPSTREAM_MODE_WEATHER: 'outage',
        UPSTREAM_MODE_CATALOG_PRIMARY: 'healthy',
      }),
    ).toEqual({
      slowLatency: 5_000,
      modes: { weather: 'outage', 'catalog-primary': 'healthy', 'catalog-replica': 'healthy' },
    });
    let error: unknown;
    try {
      upstreamOptionsFromEnv({ UPSTREAM_SLOW_MS: 'soon', UPSTREAM_MODE_CATALOG_REPLICA: 'down' });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ResilienceValidationError);
    expect((error as ResilienceValidationError).issues.map((i) => i.path)).toEqual([
      'UPSTREAM_SLOW_MS',
      'UPSTREAM_MODE_CATALOG_REPLICA',
    ]);
  });

  it('answers 503 for Atlantis in every mode, and for other cities as the mode says', async () => {
    const upstream = new FlakyUpstreamServer({ slowLatency: 20, modes: DEFAULT_UPSTREAM_MODES });
    await upstream.onModuleInit();
    try {
      const status = async (city: string) => (await fetch(`${upstream.baseUrl}/forecast/${city}`)).status;
      const seen: Record<string, number[]> = {};
      for (const mode of UPSTREAM_MODES) {
        upstream.setMode(mode);
        seen[mode] = [await status('atlantis'), await status('lisbon'), await status('porto'), await status('faro')];
      }
      expect(seen).toEqual({
        healthy: [503, 200, 200, 200],
        transient: [503, 503, 503, 200],
        outage: [503, 503, 503, 503],
        slow: [503, 200, 200, 200],
      });
      expect(upstream.requestCount).toBe(16);
    } finally {
      await upstream.onModuleDestroy();
    }
  });

  it('the control guard allows while no guard is bound, and otherwise asks the bound one', async () => {
    const context = {} as ExecutionContext;
    const deny: CanActivate = { canActivate: () => false };
    const allowLater: CanActivate = { canActivate: () => Promise.resolve(true) };
    const denyObservable: CanActivate = { canActivate: () => of(false) };
    await expect(new UpstreamControlGuard().canActivate(context)).resolves.toBe(true);
    await expect(new UpstreamControlGuard(deny).canActivate(context)).resolves.toBe(false);
    await expect(new UpstreamControlGuard(allowLater).canActivate(context)).resolves.toBe(true);
    await expect(new UpstreamControlGuard(denyObservable).canActivate(context)).resolves.toBe(false);
  });
});

describe('docs/sample-upstreams.md: the control curls, as written', () => {
  const token = 'a-long-local-admin-token';
  let app: INestApplication<App>;
  let port: number;

  beforeAll(async () => {
    port = await freePort();
    app = await startSample(undefined, { env: { ADMIN_TOKEN: token, PORT: String(port) } });
    await app.listen(port, '127.0.0.1');
  });

  afterAll(async () => {
    await app.close();
  });

  /** The doc's `curl` lines of the control route, in its first shell block after "## The control route". */
  function documentedCurls(): string[] {
    const doc = readFileSync(join(ROOT, 'docs', 'sample-upstreams.md'), 'utf8');
    const section = doc.slice(doc.indexOf('## The control route'));
    const block = /```sh\n([^]*?)```/.exec(section)![1];
    return block.split('\n').filter((line) => line.startsWith('curl '));
  }

  /** Runs a documented line in a shell, with `ADMIN_TOKEN` set or not, against this app's port. */
  function run(line: string, adminToken: string | undefined): Promise<string> {
    const env: NodeJS.ProcessEnv = { ...process.env, ADMIN_TOKEN: adminToken };
    if (adminToken === undefined) delete env.ADMIN_TOKEN;
    const command = `${line.replaceAll('localhost:3000', `127.0.0.1:${port}`)} --silent --show-error`;
    return new Promise((resolve, reject) =>
      execFile('sh', ['-c', command], { env }, (error, stdout) => (error ? reject(error) : resolve(stdout))),
    );
  }

  it('switches an upstream with the credentials it shows; without them the route answers 401', async () => {
    const [list, put] = documentedCurls();
    expect(put).toContain('-X PUT');
    const answer = JSON.parse(await run(put, token)) as { name: string; mode: string };
    expect(answer).toMatchObject({ name: 'weather', mode: 'outage' });
    expect(app.get(FlakyUpstreamServer).mode).toBe('outage');
    expect(JSON.parse(await run(list, token))).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: 'weather', mode: 'outage' })]),
    );
    expect(JSON.parse(await run(put, undefined))).toMatchObject({ statusCode: 401 });
  });
});
