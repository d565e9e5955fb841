import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

/** Where the tour's screenshots land (git-ignored; CI keeps them as artifacts). */
export const TOUR_ARTIFACTS = join(process.cwd(), 'test-artifacts', 'tour');

/** A loopback port nothing listens on right now (the app must know its own URL before it starts). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Headless Chromium (the system's) on a throw-away profile, with what the page logs collected. */
export class TourBrowser {
  /** Console errors and warnings, and uncaught page errors: `<page URL> <text>`. */
  readonly problems: string[] = [];
  private constructor(
    readonly context: BrowserContext,
    readonly page: Page,
    private readonly profile: string,
  ) {}

  static async launch(): Promise<TourBrowser> {
    mkdirSync(TOUR_ARTIFACTS, { recursive: true });
    const profile = mkdtempSync(join(tmpdir(), 'nest-resilience-tour-'));
    try {
      const context = await chromium.launchPersistentContext(profile, {
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
        viewport: { width: 1280, height: 900 },
      });
      // Only loopback: the provider's development pages ask for a web font, which is refused at once.
      await context.route(
        (url) => url.hostname !== '127.0.0.1',
        (route) => route.abort('blockedbyclient'),
      );
      const page = context.pages()[0] ?? (await context.newPage());
      const browser = new TourBrowser(context, page, profile);
      page.on('console', (message) => {
        if (message.type() === 'error' || message.type() === 'warning') {
          browser.problems.push(`${page.url()} ${message.text()} (${message.location().url})`);
        }
      });
      page.on('pageerror', (error) => browser.problems.push(`${page.url()} ${String(error)}`));
      return browser;
    } catch (error) {
      rmSync(profile, { recursive: true, force: true });
      throw error;
    }
  }

  /** The problems logged while the page was one of `origin`'s (the app's own pages, not the provider's). */
  problemsOn(origin: string): string[] {
    return this.problems.filter((p) => p.startsWith(`${origin}/`));
  }

  /** A full-page screenshot into `test-artifacts/tour/<name>.png`. */
  async screenshot(name: string): Promise<void> {
    await this.page.screenshot({ path: join(TOUR_ARTIFACTS, `${name}.png`), fullPage: true });
  }

  async close(): Promise<void> {
    try {
      await this.context.close();
    } finally {
      rmSync(this.profile, { recursive: true, force: true });
    }
  }
}
