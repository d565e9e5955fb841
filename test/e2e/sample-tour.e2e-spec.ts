import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SampleConfigFile, type ResilienceDocument } from './sample-app.fixture.js';
import { ROOT, SampleBuild } from './sample-cluster.fixture.js';
import { SampleProcess } from './sample-process.fixture.js';
import { freePort, TOUR_ARTIFACTS, TourBrowser } from './sample-tour.browser.js';

/** One row of the README's tour table: what to open or click, and what you see. */
interface TourRow {
  readonly open: string;
  readonly see: string;
}

/** The rows of the table under "Then take the tour" in README.md, top to bottom. */
function readmeTour(): TourRow[] {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const table = readme.slice(readme.indexOf('Then take the tour')).split('\n\n')[1];
  const cells = (line: string) =>
    line
      .slice(1, -1)
      .split(' | ')
      .map((cell) => cell.trim());
  return table
    .split('\n')
    .slice(2) // header and separator
    .map((line) => {
      const [open, see] = cells(line);
      return { open, see };
    });
}

/** The call a row's `curl` makes, as often as the row says (`twice`, `six times`). */
function curlOf(open: string): { path: string; times: number } | undefined {
  const match = /`curl (?:-i )?localhost:3000(\/\S*)`(?:, (twice|six times))?$/.exec(open);
  if (!match) return undefined;
  return { path: match[1], times: match[2] === 'twice' ? 2 : match[2] === 'six times' ? 6 : 1 };
}

/**
 * The README's tour, walked top to bottom on one fresh app: the built sample started as the README
 * says (`node …/sample-app/main.js`, the shipped resilience file, as a process of its own), so its
 * `kill -HUP` row sends a real signal. For the rest: each row of the
 * table is read from README.md, its text must be the one this test asserts (so the table and the test
 * change together), its `curl` is made as written, and what it prints is checked — in the order of the
 * table, each row on the state the rows before it left. The browser rows are done in headless Chromium:
 * sign in at the built-in identity provider, the dashboard's buttons. Screenshots of each step go to
 * `test-artifacts/tour/`; `dashboard.png` is the one in the README (docs/images/dashboard.png, copied
 * from a run).
 *
 * What the test reads besides the answers comes through the sample's documented surface: the admin API
 * and the control route (with ADMIN_TOKEN) and the app's output. The circuits break for 10 s in real
 * time: each row that needs an open circuit opens it and reads it at once (one request later), far
 * within the break however slowly this machine runs. */
describe('sample tour: the README table, in its order, on one fresh app', () => {
  const config = new SampleConfigFile(); // the shipped file, as is
  const TOKEN = 'a-tour-admin-token-for-reading';
  const ADMIN = { authorization: `Bearer ${TOKEN}` };
  let build: SampleBuild | undefined;
  let sample: SampleProcess;
  let browser: TourBrowser;
  let base: string;
  const timings: Record<string, number> = {};
  let requestsBefore = 0;
  let textBefore = 0;

  const page = () => browser.page;
  const weatherCircuit = () => page().locator('[data-circuit="weather"]');
  const weatherButtons = () => page().locator('.control-group[data-group="weather upstream"]');
  const admin = async (path: string, method = 'GET') => {
    const res = await fetch(`${base}${path}`, { method, headers: ADMIN });
    expect(res.status).toBe(200);
    return await res.json();
  };
  const weatherState = async () => ((await admin('/resilience/circuits/weather')) as { state: string }).state;
  const upstream = async (name = 'weather') =>
    (await admin(`/upstreams/${name}`)) as { mode: string; requests: number; inFlight: number };
  /** Closes every circuit that is not closed, through the admin API. */
  const closeAll = async () => {
    for (const c of (await admin('/resilience/circuits')) as { pipelineName: string; state: string }[]) {
      if (c.state !== 'closed') await admin(`/resilience/circuits/${encodeURIComponent(c.pipelineName)}/close`, 'POST');
    }
  };
  /** Opens the weather circuit from closed: Atlantis, strict, twice (4 failures: 500, then 2 more: 503). */
  const openWeather = async () => {
    await admin('/resilience/circuits/weather/close', 'POST');
    expect((await call('/weather/atlantis/strict')).status).toBe(500);
    expect((await call('/weather/atlantis/strict')).status).toBe(503);
  };
  const call = async (path: string) => {
    const res = await fetch(`${base}${path}`);
    const text = await res.text();
    return { status: res.status, headers: res.headers, text, json: () => JSON.parse(text) as Record<string, unknown> };
  };
  type Answer = Awaited<ReturnType<typeof call>>;

  /** What each row says, and how it is checked; a `curl` row gets the answers of its calls. */
  const steps: Record<
    string,
    { see: string; before?: () => Promise<void>; check: (answers: Answer[]) => Promise<void> }
  > = {
    '`http://127.0.0.1:3000/resilience/dashboard` in a browser': {
      see: 'you are sent to sign in at the built-in identity provider: any user name and password, **Sign-in**, then **Continue**; back on the live dashboard',
      check: async () => {
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
        await page().locator('#connection[data-connected="true"]', { hasText: 'live' }).waitFor();
        await page().locator('[data-circuit="weather"][data-state="closed"]').waitFor();
        // The upstream buttons show the weather upstream's current mode (transient at start) as pressed.
        await weatherButtons().locator('[data-role="state"]', { hasText: 'mode: transient' }).waitFor();
        expect(
          await weatherButtons().getByRole('button', { name: 'Transient', exact: true }).getAttribute('aria-pressed'),
        ).toBe('true');
        expect(await weatherCircuit().count()).toBe(1);
        await browser.screenshot('3-dashboard');
      },
    },
    "the dashboard's **weather upstream** box: **Outage**": {
      see: 'the button shows pressed: the weather upstream now answers every call with 503',
      check: async () => {
        await weatherButtons().getByRole('button', { name: 'Outage', exact: true }).click();
        await weatherButtons().locator('[data-role="answer"][data-ok="true"]', { hasText: 'Outage → 200' }).waitFor();
        await weatherButtons().locator('button[aria-pressed="true"]', { hasText: 'Outage' }).waitFor();
        expect((await upstream()).mode).toBe('outage');
      },
    },
    'then `curl -i localhost:3000/weather/lisbon/strict`, twice': {
      see: '500 (the call and its 3 retries failed), then 503 with `Retry-After`: the 6th failure in a row opened the "weather" circuit, and its card on the dashboard turns **open** as the change is pushed to it, without waiting for its 2 s refresh',
      before: async () => {
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
        requestsBefore = (await upstream()).requests;
      },
      check: async ([first, second]) => {
        const reportedOpenAt = Date.now();
        expect(first.status).toBe(500);
        expect(second.status).toBe(503);
        expect(second.headers.get('retry-after')).toBe('10');
        // 4 calls to the upstream, then 2: the second call's second attempt was the 6th failure, its third
        // was not sent.
        expect((await upstream()).requests - requestsBefore).toBe(6);
        expect(await weatherState()).toBe('open');

        // The page shows it open, pushed by the event stream (the OnCircuitOpened event reached the page).
        // How long that took is measured (timings.json), not bounded here: a wall-clock bound would
        // measure this machine's load, not the dashboard.
        await page().locator('[data-circuit="weather"][data-state="open"]').waitFor();
        await page().locator('#events li[data-event="OnCircuitOpened"]').first().waitFor();
        const openSeenAt = await page().evaluate<number | undefined>('window.openSeenAt');
        expect(openSeenAt).toBeDefined();
        timings.pageShowsOpenAfterRegistryMs = Math.max(0, openSeenAt! - reportedOpenAt);
        await weatherCircuit().locator('.badge', { hasText: 'open' }).waitFor();
        // With the break that is left.
        await weatherCircuit()
          .locator('[data-role="retry"]', { hasText: /^in \d/ })
          .waitFor();
        await browser.screenshot('4-circuit-open');
        await browser.screenshot('dashboard');
      },
    },
    "the circuit's **Isolate**, then **Close**": {
      see: 'isolated: the strict route answers 503 without reaching the upstream, the route with the fallback 200 `"source": "fallback"`; then closed again',
      check: async () => {
        await weatherCircuit().locator('button[data-action="isolate"]').click();
        await page().locator('[data-circuit="weather"][data-state="isolated"]').waitFor();
        expect(await weatherState()).toBe('isolated');
        await browser.screenshot('5-isolated');
        const before = (await upstream()).requests;
        expect((await call('/weather/lisbon/strict')).status).toBe(503);
        const fallback = await call('/weather/lisbon');
        expect(fallback.status).toBe(200);
        expect(fallback.json().source).toBe('fallback');
        expect((await upstream()).requests).toBe(before);

        await weatherCircuit().locator('button[data-action="close"]').click();
        await page().locator('[data-circuit="weather"][data-state="closed"]').waitFor();
        expect(await weatherState()).toBe('closed');
        await browser.screenshot('6-closed');
      },
    },
    "the upstream's **Healthy**": {
      see: 'the weather routes answer live again: `/weather/lisbon/strict` 200 `"source": "live"` at the first call',
      check: async () => {
        await weatherButtons().getByRole('button', { name: 'Healthy', exact: true }).click();
        await weatherButtons().locator('button[aria-pressed="true"]', { hasText: 'Healthy' }).waitFor();
        expect((await upstream()).mode).toBe('healthy');
        const before = (await upstream()).requests;
        const res = await call('/weather/lisbon/strict');
        expect(res.status).toBe(200);
        expect(res.json()).toEqual({ city: 'lisbon', temperature: 21, sky: 'clear', source: 'live' });
        expect((await upstream()).requests - before).toBe(1);
        await page().locator('[data-circuit="weather"][data-state="closed"]').waitFor();
        await browser.screenshot('7-healthy');
      },
    },
    "the upstream's **Transient** (its mode at start), then `curl -i localhost:3000/weather/lisbon`": {
      see: 'two calls in three fail: retried until it answers (two retries in the log), 200 `"source": "live"`',
      before: async () => {
        await weatherButtons().getByRole('button', { name: 'Transient', exact: true }).click();
        await weatherButtons().locator('button[aria-pressed="true"]', { hasText: 'Transient' }).waitFor();
        expect((await upstream()).mode).toBe('transient');
        requestsBefore = (await upstream()).requests;
        textBefore = sample.text.length;
      },
      check: async ([res]) => {
        expect(res.status).toBe(200);
        expect(res.json()).toEqual({ city: 'lisbon', temperature: 21, sky: 'clear', source: 'live' });
        expect((await upstream()).requests - requestsBefore).toBe(3);
        const retries = sample.text.slice(textBefore).match(/retry \d for lisbon/g);
        expect(retries).toEqual(['retry 1 for lisbon', 'retry 2 for lisbon']);
      },
    },
    '`curl -i localhost:3000/weather/atlantis`': {
      see: 'Atlantis always fails: the retries, then the `@Fallback` method, 200 `"source": "fallback"`',
      before: async () => {
        textBefore = sample.text.length;
      },
      check: async ([res]) => {
        expect(res.status).toBe(200);
        expect(res.json()).toMatchObject({ city: 'atlantis', source: 'fallback' });
        expect(sample.text.slice(textBefore)).toMatch(/WARN .*fallback for atlantis/);
        expect(await weatherState()).toBe('closed');
      },
    },
    '`curl -i localhost:3000/weather/atlantis/strict`': {
      see: 'the same pipeline and circuit without the fallback: the 4 failures of the row above count, so the second attempt is the 6th failure in a row and opens the circuit: 503 with `Retry-After: 10` — every city now fails fast until the break is over',
      check: async ([res]) => {
        expect(res.status).toBe(503);
        expect(res.headers.get('retry-after')).toBe('10');
        expect(await weatherState()).toBe('open');
        const before = (await upstream()).requests;
        const lisbon = await call('/weather/lisbon/strict');
        expect(lisbon.status).toBe(503);
        // The break runs on the real clock in the sample's process: what is left of it, rounded up.
        expect(Number(lisbon.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
        expect(Number(lisbon.headers.get('retry-after'))).toBeLessThanOrEqual(10);
        expect((await upstream()).requests).toBe(before);
      },
    },
    '`curl -i localhost:3000/weather/lisbon/limited`, six times': {
      see: 'a rate limit per caller (the signed-in user, else the client IP): 5 calls per 10 s, the 6th answers 429 with `Retry-After`',
      check: async (answers) => {
        expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 200, 429]);
        // What is left of the caller's 10 s window, rounded up: 10 when the six calls take under a second.
        expect(Number(answers[5].headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
        expect(Number(answers[5].headers.get('retry-after'))).toBeLessThanOrEqual(10);
      },
    },
    '`curl -i localhost:3000/catalog/42`': {
      see: 'hedging: the primary starts in Slow mode, so after 100 ms a hedged call goes to the replica, which answers first: `"servedBy": "replica"`; the slow call is cancelled',
      check: async ([res]) => {
        expect(res.status).toBe(200);
        expect(res.json()).toMatchObject({ id: '42', servedBy: 'replica' });
        // The primary is not still sleeping on the losing call (bounded polling: the hang-up travels a socket).
        const deadline = Date.now() + 30_000;
        while ((await upstream('catalog-primary')).inFlight > 0 && Date.now() < deadline) {
          await new Promise((r) => setTimeout(r, 20));
        }
        expect((await upstream('catalog-primary')).inFlight).toBe(0);
      },
    },
    '`curl -i localhost:3000/gateway/forecast/porto`': {
      see: 'the resilient HTTP client (the standard HTTP pipeline) in front of the weather upstream: retried until it answers, 200',
      check: async ([res]) => {
        expect(res.status).toBe(200);
        expect(res.json()).toEqual({ city: 'porto', temperature: 21, sky: 'clear' });
      },
    },
    '`curl -i localhost:3000/rpc/weather/lisbon`': {
      see: "the weather service over TCP through the resilient RPC client: retried until it answers, 200; Atlantis opens the client's own circuit",
      check: async ([res]) => {
        expect(res.status).toBe(200);
        expect(res.json()).toEqual({ city: 'lisbon', temperature: 21, sky: 'clear' });
        expect((await call('/rpc/weather/atlantis')).status).toBe(503);
        expect((await call('/rpc/weather/atlantis')).status).toBe(503);
        const before = (await upstream()).requests;
        const failsFast = await call('/rpc/weather/lisbon');
        expect(failsFast.status).toBe(503);
        expect(failsFast.headers.get('retry-after')).toBe('5');
        expect((await upstream()).requests).toBe(before);
      },
    },
    '`curl -i localhost:3000/health`': {
      see: 'Terminus with the circuits: 200 while all are closed, 503 naming an open one',
      before: closeAll,
      check: async ([res]) => {
        expect(res.status).toBe(200);
        expect(res.json()).toMatchObject({ status: 'ok', info: { resilience: { status: 'up' } } });
        // One open: 503, naming it, with the break that is left in milliseconds.
        await openWeather();
        const open = await call('/health');
        expect(open.status).toBe(503);
        const body = open.json() as { error: { resilience: { circuits: Record<string, { retryAfter: number }> } } };
        expect(body.error.resilience.circuits.weather).toMatchObject({ status: 'down', state: 'open' });
        expect(body.error.resilience.circuits.weather.retryAfter).toBeGreaterThan(1_000);
        expect(body.error.resilience.circuits.weather.retryAfter).toBeLessThanOrEqual(10_000);
      },
    },
    '`curl localhost:3000/metrics`': {
      see: 'Prometheus text: `resilience_polly_strategy_events_total{…event_name="OnRetry"…}`, the circuit states, the durations',
      check: async ([res]) => {
        expect(res.status).toBe(200);
        expect(res.text).toMatch(/^resilience_polly_strategy_events_total\{[^}]*event_name="OnRetry"[^}]*\} \d+/m);
        expect(res.text).toMatch(/^resilience_circuit_breaker_state\{/m);
        expect(res.text).toMatch(/^resilience_polly_pipeline_duration_bucket\{/m);
        expect(res.text).toMatch(/^resilience_polly_strategy_attempt_duration_bucket\{/m);
      },
    },
    'edit `sample-app/config/resilience.yaml`, then `kill -HUP <pid>` (the pid is printed at start)': {
      see: 'the changed pipelines are reloaded and an open circuit stays open; an invalid file changes nothing and logs every problem',
      check: async () => {
        // The file this app reads (RESILIENCE_CONFIG), and a real SIGHUP to the pid it printed at start.
        const pid = Number((await sample.output(/kill -HUP (\d+)/))[1]);
        expect(pid).toBe(sample.pid);
        await openWeather();
        const edit = (doc: ResilienceDocument) => {
          doc.pipelines.weather.retry = { ...(doc.pipelines.weather.retry as object), maxRetryAttempts: 2 };
        };
        config.write(edit);
        let mark = sample.text.length;
        process.kill(pid, 'SIGHUP');
        await sample.output(/SAMPLE_CONFIG_RELOADED from resilience\.yaml: reloaded \[weather\]/, mark);
        expect(sample.running).toBe(true);
        expect(await weatherState()).toBe('open');

        config.write((doc) => {
          edit(doc);
          doc.pipelines.weather.timeout = 'never';
          doc.pipelines.gateway.retry = { maxRetryAttempts: -2 };
        });
        mark = sample.text.length;
        process.kill(pid, 'SIGHUP');
        await sample.output(/SAMPLE_CONFIG_RELOAD_REJECTED the running pipelines stay/, mark);
        await sample.output(/pipelines\.weather\.timeout\.timeout: "never"/, mark);
        await sample.output(/pipelines\.gateway\.retry\.maxRetryAttempts: -2/, mark);
        expect(sample.running).toBe(true);
        expect(await weatherState()).toBe('open');
        // The weather pipeline runs the last valid file: 2 retries, so Atlantis costs 3 upstream calls.
        await admin('/resilience/circuits/weather/close', 'POST');
        const before = (await upstream()).requests;
        expect((await call('/weather/atlantis/strict')).status).toBe(500);
        expect((await upstream()).requests - before).toBe(3);
      },
    },
  };

  beforeAll(async () => {
    // The sample compiled as `npm run build` compiles it, into a folder of its own (dist/ may be rebuilt
    // by another suite meanwhile). One compilation: a generous budget for a busy machine.
    build = await SampleBuild.compile();
    // The sign-in's redirect URI names the app's port, so the port is chosen before the app starts.
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    sample = new SampleProcess(build, {
      PORT: String(port),
      RPC_PORT: String(await freePort()),
      RESILIENCE_CONFIG: config.path,
      ADMIN_TOKEN: TOKEN, // for the test's own reads; the browser signs in
      REDIS_URL: undefined,
      OIDC_PORT: undefined,
      LOG_LEVEL: undefined,
      NO_COLOR: '1',
    });
    await sample.output(/kill -HUP \d+/);
    browser = await TourBrowser.launch();
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    await sample?.kill();
    build?.dispose();
    config.dispose();
    if (browser) writeFileSync(join(TOUR_ARTIFACTS, 'timings.json'), `${JSON.stringify(timings, null, 2)}\n`);
  });

  it('gives the answers each row of the table prints, row after row', async () => {
    const rows = readmeTour();
    // Every row of the table has its check here, in the table's order, and says what the check asserts.
    expect(rows.map((r) => r.open)).toEqual(Object.keys(steps));
    for (const [index, row] of rows.entries()) {
      const step = steps[row.open];
      expect({ row: index + 1, see: row.see }).toEqual({ row: index + 1, see: step.see });
      try {
        await step.before?.();
        // The row's curl, as often as it says.
        const curl = curlOf(row.open);
        const answers: Answer[] = [];
        for (let i = 0; i < (curl?.times ?? 0); i++) answers.push(await call(curl!.path));
        await step.check(answers);
      } catch (error) {
        (error as Error).message = `README tour row ${index + 1} (${row.open}):\n${(error as Error).message}`;
        throw error;
      }
      expect(browser.problemsOn(base)).toEqual([]);
    }
    // And Ctrl-C (SIGINT) ends the tour: a clean close, exit code 0.
    process.kill(sample.pid, 'SIGINT');
    expect(await sample.exited).toEqual({ code: 0, signal: null });
  }, 300_000);
});
