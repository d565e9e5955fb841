import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { ResilienceEventStream } from '../../src/nest/admin/index.js';
import { uniquePrefix } from '../redis/redis-test.utils.js';
import { someTraffic, startFleetInstance, type FleetInstance } from './fleet.fixture.js';

/** Screenshots land in test-artifacts/ (git-ignored); with UPDATE_DOCS_IMAGES=1 also in docs/images/. */
/** What the page's rows are read for (the tests compile without the DOM's types). */
interface Row {
  readonly className: string;
  getAttribute(name: string): string | null;
}

const ARTIFACTS = join(process.cwd(), 'test-artifacts');
const DOCS_IMAGES = join(process.cwd(), 'docs', 'images');

/*
 * The dashboard in headless Chromium against a fleet of three application instances sharing one
 * redis-server (the test run's): charts, human units, pipelines with their operation keys, the fleet view
 * and a fleet-wide isolation. One browser for the file; every wait is for an outcome on the page.
 */
describe('the dashboard of a three-instance fleet, in headless Chromium', () => {
  const fleet: FleetInstance[] = [];
  let browser: BrowserContext;
  let page: Page;
  let profile: string;
  const problems: string[] = [];

  /** The whole page, or the part `selector` marks (so the sticky header never covers it). */
  async function screenshot(name: string, selector?: string): Promise<void> {
    const path = join(ARTIFACTS, `${name}.png`);
    await page.evaluate('window.scrollTo(0, 0)');
    // At the top of the page, viewport coordinates are page coordinates.
    const box = selector ? await page.locator(selector).boundingBox() : null;
    const clip = box ? { x: 0, y: Math.max(0, box.y - 8), width: 1280, height: box.height + 16 } : undefined;
    await page.screenshot({ path, fullPage: true, clip });
    if (process.env.UPDATE_DOCS_IMAGES === '1') copyFileSync(path, join(DOCS_IMAGES, `${name}.png`));
  }

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    const keyPrefix = uniquePrefix('dashboard-fleet');
    for (const instanceName of ['api-1', 'api-2', 'api-3']) {
      fleet.push(await startFleetInstance({ redisUrl: process.env.REDIS_URL!, keyPrefix, instanceName, listen: true }));
    }
    await someTraffic(fleet[0].registry, 12);
    await someTraffic(fleet[1].registry, 6);
    // The third instance only ever calls payments.
    await fleet[2].registry.getPipeline('payments').execute(() => 'ok', { operationKey: 'charge' });

    profile = mkdtempSync(join(tmpdir(), 'nest-resilience-fleet-chromium-'));
    browser = await chromium.launchPersistentContext(profile, {
      executablePath: '/usr/bin/chromium',
      headless: true,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
      viewport: { width: 1280, height: 900 },
    });
    page = browser.pages()[0] ?? (await browser.newPage());
    page.setDefaultTimeout(15_000);
    page.on('console', (m) => {
      if (m.type() === 'error' || m.type() === 'warning') problems.push(m.text());
    });
    page.on('pageerror', (error) => problems.push(String(error)));
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await Promise.all(fleet.map((i) => i.app.close()));
    if (profile) rmSync(profile, { recursive: true, force: true });
  });

  it('charts each circuit (calls/s, failure rate, rejections) and labels latency in human units', async () => {
    await page.goto(fleet[0].dashboard!);
    await page.locator('#connection[data-connected="true"]', { hasText: 'live' }).waitFor();
    const payments = page.locator('[data-circuit="payments"]');
    await payments.waitFor();
    // Three charts per circuit, each an inline SVG line over five minutes (60 steps of 5 s).
    for (const chart of ['calls/s', 'failure rate', 'rejections/s']) {
      const svg = payments.locator(`[data-chart="${chart}"] svg.spark`);
      expect(await svg.getAttribute('data-points')).toBe('60');
      expect(await svg.locator('polyline').getAttribute('points')).toMatch(/^[\d.]+,[\d.]+( [\d.]+,[\d.]+){59}/);
    }
    expect(await payments.locator('[data-chart="calls/s"] strong').textContent()).toMatch(/^\d+(\.\d+)?\/s$/);
    for (const p of ['p50', 'p90', 'p99']) {
      expect(await payments.locator(`[data-percentile="${p}"]`).textContent()).toMatch(
        new RegExp(`^${p} \\d+(\\.\\d+)? ms$`),
      );
    }
    // A circuit that never changed state has no history yet.
    expect(await payments.locator('[data-role="history"] li').first().textContent()).toBe('no state change seen yet');
    expect(problems).toEqual([]);
  });

  it('lists pipelines by name with their operation keys under them, and limiters with their charts', async () => {
    const rows = page.locator('#stats tbody tr');
    await page.locator('#stats tr.operation[data-operation="refund"]').waitFor();
    const order = await rows.evaluateAll((trs: Row[]) =>
      trs.map((tr) => `${tr.className}:${tr.getAttribute('data-pipeline')}:${tr.getAttribute('data-operation') ?? ''}`),
    );
    const payments = order.indexOf('pipeline:payments:');
    expect(order.slice(payments, payments + 3)).toEqual([
      'pipeline:payments:',
      'operation:payments:charge',
      'operation:payments:refund',
    ]);
    expect(await page.locator('[data-empty="stats"]').isHidden()).toBe(true);
    const limiter = page.locator('#limiters tr[data-limiter="search"]');
    await limiter.waitFor();
    expect(await limiter.locator('svg.spark').count()).toBe(2);
    expect(await limiter.locator('td').nth(1).textContent()).toBe('4');
  });

  it('shows every instance of the fleet with its circuit states, and an opening on all of them', async () => {
    await page.waitForFunction("document.querySelectorAll('#fleet-instances tbody tr').length === 3");
    const names = await page
      .locator('#fleet-instances tbody tr')
      .evaluateAll((trs: Row[]) => trs.map((tr) => tr.getAttribute('data-instance-name')));
    expect(names).toEqual(['api-1', 'api-2', 'api-3']);
    expect(await page.locator('#fleet-instances tr[data-instance-name="api-1"] td').first().textContent()).toBe('now');
    expect(await page.locator('#fleet-instances tr[data-instance-name="api-2"] td').first().textContent()).toMatch(
      /^(\d+(\.\d+)? (ms|s)) ago$/,
    );

    // The circuit opens through the second instance; the shared store opens it for every instance.
    for (let i = 0; i < 2; i++) {
      await fleet[1].registry.getPipeline('payments').executeOutcome(() => Promise.reject(new Error('down')));
    }
    const row = page.locator('#fleet-circuits tr[data-fleet-circuit="payments"]');
    for (const name of ['api-1', 'api-2', 'api-3']) {
      await row.locator(`td[data-fleet-instance="${name}"][data-state="open"]`).waitFor();
    }
    const card = page.locator('[data-circuit="payments"][data-state="open"]');
    await card.waitFor();
    // "retry in 9.9 s": the break left, in seconds with one decimal under 10 s.
    expect(await card.locator('[data-role="retry"]').textContent()).toMatch(/^in (\d\.\d|\d+) s$/);
    await card
      .locator('[data-role="history"] li[data-state="open"]', { hasText: /^opened .+ · for .+ now$/ })
      .waitFor();
    expect(await card.locator('svg.timeline rect[data-state="open"]').count()).toBeGreaterThan(0);
    expect(await page.locator('#fleet-pipelines tr[data-pipeline="payments"] td').first().textContent()).toBe('3');
    await screenshot('dashboard-circuits');
    expect(problems).toEqual([]);
  });

  it('isolates a circuit for the whole fleet from one dashboard', async () => {
    await page.locator('[data-circuit="payments"] button[data-action="isolate"]').click();
    const row = page.locator('#fleet-circuits tr[data-fleet-circuit="payments"]');
    for (const name of ['api-1', 'api-2', 'api-3']) {
      await row.locator(`td[data-fleet-instance="${name}"][data-state="isolated"]`).waitFor();
    }
    for (const instance of fleet) expect((await instance.registry.circuitState('payments'))!.state).toBe('isolated');
    await screenshot('dashboard-fleet', '#fleet');
    await page.locator('[data-circuit="payments"] button[data-action="close"]').click();
    await row.locator('td[data-fleet-instance="api-3"][data-state="closed"]').waitFor();
    expect(problems).toEqual([]);
  });

  it('says what is empty, and says when the instance is gone instead of showing a stale "live"', async () => {
    await page.goto(fleet[2].dashboard!);
    await page.locator('#connection[data-connected="true"]', { hasText: 'live' }).waitFor();
    // Nothing happened on this instance that is an event (the opening and the isolation were elsewhere).
    await page.locator('[data-empty="events"]', { hasText: 'No event yet.' }).waitFor();
    expect(await page.locator('#events li').count()).toBe(0);

    // The instance stops answering (503) and its event stream ends: the page says so and dims.
    await page.route('**/resilience/**', (route) => route.fulfill({ status: 503, body: 'unavailable' }));
    fleet[2].app.get(ResilienceEventStream).close();
    await page.locator('#connection[data-connected="false"]').waitFor();
    expect(await page.locator('#connection').textContent()).not.toBe('live');
    await page.locator('body[data-stale="true"]').waitFor();
    expect(await page.locator('#updated').textContent()).toMatch(/^not updated since /);
    // Back: live again.
    await page.unroute('**/resilience/**');
    await page.locator('#connection[data-connected="true"]', { hasText: 'live' }).waitFor();
    await page.locator('body:not([data-stale])').waitFor();
  }, 60_000);
});
