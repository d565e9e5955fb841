import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { INestApplication } from '@nestjs/common';
import type { App } from 'supertest/types.js';
import { signIn, startSample } from './sample-app.fixture.js';
import { freePort, TourBrowser } from './sample-tour.browser.js';

/**
 * The dashboard in headless Chromium when its session ends while it is open (signed out in another tab,
 * the session gone): the admin API and the event stream refuse the page from then on. It must not go on
 * showing "live" over stale figures and raw 401 answers: it says "signed out", links to sign in again,
 * and stops polling.
 */
describe('sample dashboard: the session ends while it is open', () => {
  let app: INestApplication<App>;
  let browser: TourBrowser;
  let base: string;
  let cookie: string;

  beforeAll(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    app = await startSample(undefined, { env: { PORT: String(port), ADMIN_TOKEN: undefined } });
    await app.listen(port, '127.0.0.1');
    browser = await TourBrowser.launch();
    cookie = (await signIn(app.getHttpServer(), 'ada')).cookie;
    const [name, value] = [cookie.slice(0, cookie.indexOf('=')), cookie.slice(cookie.indexOf('=') + 1)];
    await browser.context.addCookies([{ name, value, url: base }]);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await app?.close();
  });

  it('says "signed out" with a link to sign in again instead of a stale "live"', async () => {
    const page = browser.page;
    await page.goto(`${base}/resilience/dashboard`);
    await page.locator('#connection[data-connected="true"]', { hasText: 'live' }).waitFor();
    const weather = page.locator('.control-group[data-group="weather upstream"]');
    await weather.locator('[data-role="state"]', { hasText: 'mode: transient' }).waitFor();
    expect(browser.problemsOn(base)).toEqual([]);

    // Signed out elsewhere: the sample's sign-out route ends the session on the server.
    const out = await fetch(`${base}/auth/logout`, { headers: { cookie }, redirect: 'manual' });
    expect(out.status).toBe(302);
    expect((await fetch(`${base}/resilience/circuits`, { headers: { cookie } })).status).toBe(401);

    // The page's next read is refused: it says so (bounded by Playwright's wait, not a clock here).
    const connection = page.locator('#connection[data-signed-out="true"]');
    await connection.waitFor();
    expect(await connection.getAttribute('data-connected')).toBe('false');
    expect(await connection.textContent()).toBe('signed out · sign in again');
    const link = connection.locator('a[data-role="sign-in"]');
    expect(await link.getAttribute('href')).toBe('/auth/login?returnTo=/resilience/dashboard');
    expect(await page.locator('body').getAttribute('data-stale')).toBe('true');
    // No raw refusal in the upstream box: it keeps the last mode it read.
    expect(await weather.locator('[data-role="state"]').textContent()).toContain('mode: transient');
    expect(await page.locator('main').textContent()).not.toContain('401');

    // A button pressed now says signed out too, not the refusal's body.
    await weather.getByRole('button', { name: 'Outage', exact: true }).click();
    await weather.locator('[data-role="answer"][data-ok="false"]', { hasText: 'Outage → signed out' }).waitFor();

    // The link goes through the sign-in (to the provider's login page) and back to the dashboard.
    await link.click();
    await page.locator('input[name="login"]').waitFor();
  });
});
