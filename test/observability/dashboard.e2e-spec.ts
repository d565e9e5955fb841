import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  BadRequestException,
  Body,
  Controller,
  Get,
  Injectable,
  Put,
  UseGuards,
  type CanActivate,
  type ExecutionContext,
  type INestApplication,
} from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { InMemoryAdaptiveThrottlingStore, ResilienceModule, ResiliencePipelineRegistry } from '../../src/index.js';
import { ResilienceAdminModule } from '../../src/nest/admin/index.js';

/** Screenshots land here (git-ignored); CI keeps them as artifacts. */
const ARTIFACTS = join(process.cwd(), 'test-artifacts');

@Injectable()
class OperatorGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    return context.switchToHttp().getRequest<{ headers: Record<string, string> }>().headers['x-operator'] === 'yes';
  }
}

/** A fault switch of the app's own, driven by the dashboard's buttons (behind the same guard). */
@Controller('switch')
@UseGuards(OperatorGuard)
class SwitchController {
  mode = 'healthy';

  @Get()
  state(): { mode: string } {
    return { mode: this.mode };
  }

  @Put('mode')
  set(@Body() body: { mode?: string }): { mode: string } {
    if (body.mode !== 'healthy' && body.mode !== 'outage')
      throw new BadRequestException('mode must be healthy or outage');
    this.mode = body.mode;
    return { mode: this.mode };
  }
}

/** A group name from configuration that would be markup if it were not escaped. */
const GROUP = '<b>switch</b> "one"';
const action = (label: string, mode: string) => ({
  group: GROUP,
  label,
  method: 'PUT' as const,
  url: '/switch/mode',
  body: { mode },
  stateUrl: '/switch',
  activeWhen: { mode },
});

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const throttleStore = new InMemoryAdaptiveThrottlingStore();

describe('the dashboard in headless Chromium', () => {
  let app: INestApplication;
  let registry: ResiliencePipelineRegistry;
  let browser: BrowserContext;
  let page: Page;
  let profile: string;
  let url: string;
  const consoleErrors: string[] = [];
  const requested: string[] = [];

  beforeAll(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    const moduleRef = await Test.createTestingModule({
      imports: [
        ResilienceModule.forRoot({
          logging: false,
          pipelines: {
            payments: {
              retry: { maxRetryAttempts: 1, delay: 0 },
              circuitBreaker: { kind: 'consecutive', failureThreshold: 3, breakDuration: 60_000 },
            },
            catalog: {
              circuitBreaker: {
                kind: 'time-window',
                failureRatio: 0.5,
                minimumThroughput: 10,
                samplingDuration: 30_000,
              },
            },
            search: { concurrencyLimiter: { permitLimit: 8, queueLimit: 4 } },
            // Shared by a fleet through a store; a random source that never throttles.
            pricing: {
              adaptiveThrottling: {
                fleet: { store: throttleStore, syncInterval: 50 },
                window: 10_000,
                random: () => 0.99,
              },
            },
          },
        }),
        ResilienceAdminModule.forRoot({
          guards: [OperatorGuard],
          control: true,
          dashboard: {
            actions: [action('Healthy', 'healthy'), action('Outage', 'outage'), action('Broken', 'broken')],
          },
        }),
      ],
      controllers: [SwitchController],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.listen(0, '127.0.0.1');
    url = `${(await app.getUrl()).replace('[::1]', '127.0.0.1')}/resilience/dashboard`;
    registry = app.get(ResiliencePipelineRegistry);
    registry.getPipeline('pricing'); // made, not called: it has not synced yet
    // Some traffic, so the page has figures to show.
    for (let i = 0; i < 12; i++) {
      await registry.getPipeline('payments').execute(() => sleep(1 + (i % 4)).then(() => 'ok'));
      await registry
        .getPipeline('catalog', i % 2 ? 'eu-west' : 'us-east')
        .executeOutcome(() => (i % 5 === 0 ? Promise.reject(new Error('x')) : sleep(2).then(() => 'ok')));
      await registry.getPipeline('search').execute(() => 'ok');
    }

    profile = mkdtempSync(join(tmpdir(), 'nest-resilience-chromium-'));
    browser = await chromium.launchPersistentContext(profile, {
      executablePath: '/usr/bin/chromium',
      headless: true,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
      extraHTTPHeaders: { 'x-operator': 'yes' },
      viewport: { width: 1280, height: 860 },
    });
    page = browser.pages()[0] ?? (await browser.newPage());
    page.on('console', (message) => {
      if (message.type() === 'error' || message.type() === 'warning') consoleErrors.push(message.text());
    });
    page.on('pageerror', (error) => consoleErrors.push(String(error)));
    page.on('request', (r) => requested.push(r.url()));
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await app?.close();
    if (profile) rmSync(profile, { recursive: true, force: true });
  });

  it('loads with every circuit and no console error', async () => {
    await page.goto(url);
    await page.waitForSelector('#connection[data-connected="true"]');
    await page.waitForSelector('[data-circuit="payments"][data-state="closed"]');
    expect(await page.locator('[data-circuit="catalog"]').count()).toBe(2);
    expect(await page.locator('#stats tbody tr').count()).toBeGreaterThanOrEqual(3);
    expect(await page.locator('#limiters tbody tr').count()).toBe(2);
    expect(await page.locator('[data-circuit="payments"] button[data-action="isolate"]').isEnabled()).toBe(true);
    expect(consoleErrors).toEqual([]);
    // Everything comes from the app itself: no CDN, no other origin.
    const origin = new URL(url).origin;
    expect(requested.filter((u) => !u.startsWith(`${origin}/`) && !u.startsWith('data:'))).toEqual([]);
    expect(requested).toEqual(
      expect.arrayContaining([`${origin}/resilience/dashboard.js`, `${origin}/resilience/dashboard.css`]),
    );
  });

  it('redraws a circuit opening on the pushed event, without waiting for its 2 s refresh, and lists the event', async () => {
    // A second page whose periodic refresh never runs: what it shows after loading came by the event stream.
    const pushed = await browser.newPage();
    try {
      await pushed.addInitScript(`window.__intervals = [];
        window.setInterval = function (fn, ms) { window.__intervals.push(ms); return 0; };`);
      await pushed.goto(url);
      await pushed.waitForSelector('#connection[data-connected="true"]');
      await pushed.waitForSelector('[data-circuit="payments"][data-state="closed"]');
      expect(await pushed.evaluate('window.__intervals')).toEqual([2_000]); // the refresh it would have run

      await registry.getPipeline('payments').executeOutcome(() => Promise.reject(new Error('down')));
      await registry.getPipeline('payments').executeOutcome(() => Promise.reject(new Error('down')));
      // Budgets for a busy machine, not speed bounds: without the push, this page would never turn open.
      await pushed.waitForSelector('[data-circuit="payments"][data-state="open"]', { timeout: 10_000 });
      await pushed.waitForSelector('#events li[data-event="OnCircuitOpened"]', { timeout: 10_000 });
      await page.waitForSelector('[data-circuit="payments"][data-state="open"]', { timeout: 10_000 });
      await page.waitForSelector('#events li[data-event="OnCircuitOpened"]', { timeout: 10_000 });
      await page.screenshot({ path: join(ARTIFACTS, 'dashboard-laptop.png'), fullPage: true });
      expect(consoleErrors).toEqual([]);
    } finally {
      await pushed.close();
    }
  });

  it("keeps every chart's figure inside its card", async () => {
    await page.waitForSelector('[data-circuit="payments"] .chart figcaption strong');
    const outside = await page.evaluate(`[...document.querySelectorAll('.card')].flatMap((card) => {
      const box = card.getBoundingClientRect();
      return [...card.querySelectorAll('.chart figcaption > *')]
        .filter((e) => { const r = e.getBoundingClientRect(); return r.right > box.right + 0.5 || r.left < box.left - 0.5; })
        .map((e) => card.dataset.circuit + ': ' + e.textContent);
    })`);
    expect(outside).toEqual([]);
  });

  it("says whose a fleet throttle's figures are: this instance's until a sync answers, then the fleet's", async () => {
    const row = page.locator('[data-limiter="pricing"] td[data-throttle="yes"]');
    expect(await row.getAttribute('data-shared')).toBe('false');
    expect(await row.textContent()).toBe('0 / 0, 0 % · this instance only (not synced)');
    expect(await page.locator('[data-limiter="pricing"] th').textContent()).toBe('pricing');
    await registry.getPipeline('pricing').execute(() => 'ok'); // the first call starts the syncs
    await page.waitForSelector('[data-limiter="pricing"] td[data-shared="true"]');
    expect(await row.textContent()).toBe("1 / 1, 0 % · the fleet's");
  });

  it('isolates the circuit with its button', async () => {
    await page.click('[data-circuit="payments"] button[data-action="isolate"]');
    await page.waitForSelector('[data-circuit="payments"][data-state="isolated"]');
    expect((await registry.circuitState('payments'))!.state).toBe('isolated');
    await page.click('[data-circuit="payments"] button[data-action="close"]');
    await page.waitForSelector('[data-circuit="payments"][data-state="closed"]');
    expect((await registry.circuitState('payments'))!.state).toBe('closed');
    expect(consoleErrors).toEqual([]);
  });

  it("runs the app's own buttons: the answer, the current state, the pressed button", async () => {
    const group = page.locator('.control-group').first();
    expect(await group.locator('h3').textContent()).toBe(GROUP);
    await page.waitForSelector('.control-group [data-role="state"]:text("mode: healthy")');
    expect(await group.locator('button:text("Healthy")').getAttribute('aria-pressed')).toBe('true');
    expect(await group.locator('button:text("Outage")').getAttribute('aria-pressed')).toBe('false');

    await group.locator('button:text("Outage")').click();
    await page.waitForSelector(
      '.control-group [data-role="answer"][data-ok="true"]:text("Outage → 200: mode: outage")',
    );
    await page.waitForSelector('.control-group button[aria-pressed="true"]:text("Outage")');
    expect(await group.locator('[data-role="state"]').textContent()).toBe('mode: outage');
    expect(app.get(SwitchController).mode).toBe('outage');

    // An answer that is not 2xx is shown as such, with the route's message; the state stays.
    await group.locator('button:text("Broken")').click();
    await page.waitForSelector(
      '.control-group [data-role="answer"][data-ok="false"]:text("Broken → 400: mode must be healthy or outage")',
    );
    expect(app.get(SwitchController).mode).toBe('outage');
    // Chromium itself logs the 400 of that call; it is the only console line.
    expect(consoleErrors).toEqual([expect.stringContaining('status of 400')]);
    consoleErrors.length = 0;
    await page.screenshot({ path: join(ARTIFACTS, 'dashboard-actions.png'), fullPage: true });
    await group.locator('button:text("Healthy")').click();
    await page.waitForSelector('.control-group button[aria-pressed="true"]:text("Healthy")');
    expect(consoleErrors).toEqual([]);
  });

  it('fits a phone screen without sideways scrolling', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.waitForSelector('[data-circuit="payments"]');
    const overflow = Number(await page.evaluate('document.documentElement.scrollWidth - window.innerWidth'));
    expect(overflow).toBeLessThanOrEqual(0);
    await page.screenshot({ path: join(ARTIFACTS, 'dashboard-phone.png'), fullPage: true });
    expect(consoleErrors).toEqual([]);
  });
});
