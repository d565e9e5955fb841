import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { INestApplication } from '@nestjs/common';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import request from 'supertest';
import type { App } from 'supertest/types.js';
import { ResiliencePipelineRegistry } from '../../src/index.js';
import { FlakyUpstreamServer } from '../../sample-app/upstream/flaky-upstream.server.js';
import { SampleConfigFile, startSample, withoutRetryDelays } from './sample-app.fixture.js';
import { freePort, TOUR_ARTIFACTS, TourBrowser } from './sample-tour.browser.js';

/**
 * The README's tour, as a user does it in a browser: sign in at the built-in identity provider, open the
 * dashboard, switch the weather upstream to outage, watch its circuit open, isolate and close it, and
 * switch the upstream back. Screenshots of each step go to `test-artifacts/tour/`; `dashboard.png` is the
 * one in the README (docs/images/dashboard.png, copied from a run).
 */
describe('sample tour in headless Chromium: sign in, break the weather upstream, watch its circuit', () => {
  // No retry delays; a break far longer than the tour, so the circuit only closes when the tour says so.
  const config = new SampleConfigFile((doc) => {
    withoutRetryDelays(doc);
    doc.pipelines.weather.circuitBreaker = {
      ...(doc.pipelines.weather.circuitBreaker as object),
      breakDuration: '1m',
    };
  });
  let app: INestApplication<App>;
  let registry: ResiliencePipelineRegistry;
  let upstream: FlakyUpstreamServer;
  let browser: TourBrowser;
  let base: string;
  const timings: Record<string, number> = {};

  const page = () => browser.page;
  const weatherCircuit = () => page().locator('[data-circuit="weather"]');
  const weatherButtons = () => page().locator('.control-group[data-group="weather upstream"]');
  const weatherState = async () => (await registry.circuitState('weather'))?.state;

  beforeAll(async () => {
    // The sign-in's redirect URI names the app's port, so the port is chosen before the app starts.
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    app = await startSample(config, { env: { PORT: String(port), ADMIN_TOKEN: undefined } });
    await app.listen(port, '127.0.0.1');
    registry = app.get(ResiliencePipelineRegistry);
    upstream = app.get(FlakyUpstreamServer);
    browser = await TourBrowser.launch();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await app?.close();
    config.dispose();
    if (browser) writeFileSync(join(TOUR_ARTIFACTS, 'timings.json'), `${JSON.stringify(timings, null, 2)}\n`);
  });

  it('sends the browser to sign in at the built-in provider, any user name signs in, and comes back to the dashboard', async () => {
    const visited: string[] = [];
    const onRequest = (r: { url(): string; isNavigationRequest(): boolean }) => {
      if (r.isNavigationRequest()) visited.push(r.url());
    };
    page().on('request', onRequest);
    await page().goto(`${base}/resilience/dashboard`);
    // The provider's own login page (oidc-provider's development pages), on its own port.
    const login = page().locator('input[name="login"]');
    await login.waitFor();
    expect(new URL(page().url()).origin).not.toBe(base);
    await browser.screenshot('1-sign-in');
    await login.fill('ada');
    await page().locator('input[name="password"]').fill('anything');
    await page().getByRole('button', { name: 'Sign-in', exact: true }).click();
    // Then its consent page: the sample asks for openid and offline_access.
    await page().locator('input[name="prompt"][value="consent"]').waitFor({ state: 'attached' });
    await browser.screenshot('2-consent');
    await page().getByRole('button', { name: 'Continue', exact: true }).click();

    await page().waitForURL(`${base}/resilience/dashboard`);
    page().off('request', onRequest);
    // Through the app's sign-in route, which remembered where to come back to.
    expect(visited).toContain(`${base}/auth/login?returnTo=/resilience/dashboard`);
    expect(visited.at(-1)).toBe(`${base}/resilience/dashboard`);
    await page().locator('#connection[data-connected="true"]').waitFor();
    await page().locator('[data-circuit="weather"][data-state="closed"]').waitFor();
    // The upstream buttons show the weather upstream's current mode (transient at start) as pressed.
    await weatherButtons().locator('[data-role="state"]', { hasText: 'mode: transient' }).waitFor();
    expect(
      await weatherButtons().getByRole('button', { name: 'Transient', exact: true }).getAttribute('aria-pressed'),
    ).toBe('true');
    expect(await weatherCircuit().count()).toBe(1);
    await browser.screenshot('3-dashboard');
    expect(browser.problemsOn(base)).toEqual([]);
  });

  it('switches the weather upstream to outage with its button', async () => {
    await weatherButtons().getByRole('button', { name: 'Outage', exact: true }).click();
    await weatherButtons().locator('[data-role="answer"][data-ok="true"]', { hasText: 'Outage → 200' }).waitFor();
    await weatherButtons().locator('button[aria-pressed="true"]', { hasText: 'Outage' }).waitFor();
    expect(upstream.mode).toBe('outage');
    expect(browser.problemsOn(base)).toEqual([]);
  });

  it('opens the weather circuit under traffic to the strict route, and the dashboard shows it within a second', async () => {
    // The page notes when the weather card first shows "open" (its own clock: this machine's).
    // (A script in the page's own terms: this project's TypeScript has no DOM types.)
    await page().evaluate(`
      new MutationObserver((records, observer) => {
        if (document.querySelector('[data-circuit="weather"][data-state="open"]')) {
          window.openSeenAt = Date.now();
          observer.disconnect();
        }
      }).observe(document.getElementById('circuits'), { subtree: true, childList: true, attributes: true });
    `);
    const statuses: number[] = [];
    let retryAfter: string | null = null;
    let reportedOpenAt: number | undefined;
    for (let call = 0; call < 10 && reportedOpenAt === undefined; call++) {
      const res = await fetch(`${base}/weather/lisbon/strict`);
      await res.arrayBuffer();
      statuses.push(res.status);
      retryAfter = res.headers.get('retry-after');
      if ((await weatherState()) === 'open') reportedOpenAt = Date.now();
    }
    // 4 failures (the call and its 3 retries: 500), then 2 more reach the threshold of 6: 503.
    expect(statuses).toEqual([500, 503]);
    expect(retryAfter).toBe('60');
    expect(reportedOpenAt).toBeDefined();

    // Within a second of the app reporting it open, the page shows it open.
    await page().locator('[data-circuit="weather"][data-state="open"]').waitFor({ timeout: 1_000 });
    const openSeenAt = await page().evaluate<number | undefined>('window.openSeenAt');
    expect(openSeenAt).toBeDefined();
    timings.pageShowsOpenAfterRegistryMs = Math.max(0, openSeenAt! - reportedOpenAt!);
    // And measured from the opening itself (the OnCircuitOpened event, as the admin API keeps it).
    const events = (await (await page().request.get(`${base}/resilience/events/recent`)).json()) as {
      eventName: string;
      pipelineName?: string;
      time: number;
    }[];
    const opened = events.find((e) => e.eventName === 'OnCircuitOpened' && e.pipelineName === 'weather');
    expect(opened).toBeDefined();
    timings.pageShowsOpenAfterOpeningMs = openSeenAt! - opened!.time;
    expect(timings.pageShowsOpenAfterOpeningMs).toBeLessThan(1_000);

    await page().locator('#events li[data-event="OnCircuitOpened"]').first().waitFor();
    await weatherCircuit().locator('.badge', { hasText: 'open' }).waitFor();
    // With the break that is left.
    await weatherCircuit().locator('dt', { hasText: 'retry after' }).waitFor();
    await browser.screenshot('4-circuit-open');
    await browser.screenshot('dashboard');
    expect(browser.problemsOn(base)).toEqual([]);
  });

  it('isolates the open circuit and closes it with its buttons', async () => {
    await weatherCircuit().locator('button[data-action="isolate"]').click();
    await page().locator('[data-circuit="weather"][data-state="isolated"]').waitFor();
    expect(await weatherState()).toBe('isolated');
    await browser.screenshot('5-isolated');
    // Isolated, nothing reaches the upstream.
    const before = upstream.requestCount;
    const res = await fetch(`${base}/weather/lisbon/strict`);
    await res.arrayBuffer();
    expect(res.status).toBe(503);
    expect(upstream.requestCount).toBe(before);

    await weatherCircuit().locator('button[data-action="close"]').click();
    await page().locator('[data-circuit="weather"][data-state="closed"]').waitFor();
    expect(await weatherState()).toBe('closed');
    await browser.screenshot('6-closed');
    expect(browser.problemsOn(base)).toEqual([]);
  });

  it('switches the upstream back to healthy: the routes answer live, the circuit stays closed', async () => {
    await weatherButtons().getByRole('button', { name: 'Healthy', exact: true }).click();
    await weatherButtons().locator('button[aria-pressed="true"]', { hasText: 'Healthy' }).waitFor();
    expect(upstream.mode).toBe('healthy');
    const before = upstream.requestCount;
    const res = await fetch(`${base}/weather/lisbon/strict`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ city: 'lisbon', temperature: 21, sky: 'clear', source: 'live' });
    expect(upstream.requestCount - before).toBe(1);
    await page().locator('[data-circuit="weather"][data-state="closed"]').waitFor();
    await browser.screenshot('7-healthy');
    expect(await weatherState()).toBe('closed');
    expect(browser.problemsOn(base)).toEqual([]);
  });
});

/** The README's tour rows that no other suite states exactly as the row does. */
describe('sample tour: the rows of the README table, with the default file', () => {
  const config = new SampleConfigFile(withoutRetryDelays);
  let app: INestApplication<App>;
  let server: App;

  beforeAll(async () => {
    app = await startSample(config);
    server = app.getHttpServer();
  });

  afterAll(async () => {
    await app.close();
    config.dispose();
  });

  it('the gateway route: the resilient HTTP client retries the transient upstream until it answers', async () => {
    const upstream = app.get(FlakyUpstreamServer);
    upstream.setMode('transient'); // fail, fail, answer, from here
    const before = upstream.requestCount;
    const res = await request(server).get('/gateway/forecast/porto').expect(200);
    expect(res.body).toEqual({ city: 'porto', temperature: 21, sky: 'clear' });
    expect(upstream.requestCount - before).toBe(3);
  });

  it('the strict route for Atlantis: 500 once the retries run out, the second time 503 with Retry-After (the circuit opened)', async () => {
    const upstream = app.get(FlakyUpstreamServer);
    await request(server).get('/weather/atlantis/strict').expect(500);
    const res = await request(server).get('/weather/atlantis/strict').expect(503);
    expect(res.headers['retry-after']).toBe('10');
    expect((await app.get(ResiliencePipelineRegistry).circuitState('weather'))?.state).toBe('open');
    // Open, the other cities fail fast too, without a call to the upstream; the route with a fallback falls back.
    const before = upstream.requestCount;
    await request(server).get('/weather/lisbon/strict').expect(503);
    const fallback = await request(server).get('/weather/lisbon').expect(200);
    expect(fallback.body.source).toBe('fallback');
    expect(upstream.requestCount).toBe(before);
  });
});
