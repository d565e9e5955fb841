// The documentation site as `npm run docs` builds it (the repository's typedoc.config.js, warnings fatal),
// built here into a temporary folder: each strategy page carries its Mermaid diagram's source and the
// script that draws it, Mermaid itself is among the site's assets (no CDN), and headless Chromium, reading
// the site from a loopback server with every other host refused, draws each diagram as an SVG.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { extname, join, normalize, resolve } from 'node:path';
import { promisify } from 'node:util';
import { chromium, type Browser } from 'playwright-core';

const run = promisify(execFile);
const root = resolve(import.meta.dirname, '..');

/** The ```mermaid fences of a guide, as written. */
function diagramsOf(page: string): string[] {
  const text = readFileSync(join(root, page), 'utf8');
  return [...text.matchAll(/^```mermaid\n([\s\S]*?)^```$/gm)].map((match) => match[1]);
}

const escapeHtml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

const strategyPages = readdirSync(join(root, 'docs/strategies'))
  .filter((file) => file.endsWith('.md'))
  .map((file) => `docs/strategies/${file}`);

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};

let site: string;
let server: Server;
let origin: string;
let browser: Browser | undefined;

/** The site's page of each strategy guide: the document whose diagrams are the guide's. */
const pageOf = new Map<string, string>();

beforeAll(async () => {
  site = mkdtempSync(join(tmpdir(), 'nest-resilience-docs-site-'));
  await run(process.execPath, [join(root, 'node_modules/typedoc/bin/typedoc'), '--out', site], {
    cwd: root,
    maxBuffer: 16 * 1024 * 1024,
  });
  const documents = readdirSync(join(site, 'documents')).map((file) => `documents/${file}`);
  for (const guide of strategyPages) {
    const [first] = diagramsOf(guide);
    const found = documents.find((file) => readFileSync(join(site, file), 'utf8').includes(escapeHtml(first)));
    if (found) pageOf.set(guide, found);
  }
  server = createServer((request, response) => {
    const path = normalize(join(site, decodeURIComponent(new URL(request.url ?? '/', 'http://x').pathname)));
    if (!path.startsWith(site) || !statSync(path, { throwIfNoEntry: false })?.isFile()) {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(200, { 'content-type': CONTENT_TYPES[extname(path)] ?? 'application/octet-stream' });
    response.end(readFileSync(path));
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  origin = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await new Promise((done) => server?.close(done));
  if (site) rmSync(site, { recursive: true, force: true });
});

describe('the documentation site', () => {
  it('has a page for every strategy guide', () => {
    expect(strategyPages.length).toBeGreaterThanOrEqual(7);
    expect(strategyPages.filter((guide) => !pageOf.has(guide))).toEqual([]);
  });

  it.each(strategyPages)('%s: its diagram as source for Mermaid, and the script that draws it', (guide) => {
    const html = readFileSync(join(site, pageOf.get(guide)!), 'utf8');
    const diagrams = diagramsOf(guide);
    expect(diagrams.length).toBeGreaterThan(0);
    const blocks = [...html.matchAll(/<pre class="mermaid">([\s\S]*?)<\/pre>/g)].map((match) => match[1]);
    expect(blocks).toEqual(diagrams.map(escapeHtml));
    expect(html).toContain('<script defer src="../assets/custom.js"></script>');
  });

  it('ships Mermaid in its assets, and the script loads it from there', () => {
    const bundle = join(root, 'node_modules/mermaid/dist/mermaid.min.js');
    expect(readFileSync(join(site, 'assets/mermaid.min.js')).equals(readFileSync(bundle))).toBe(true);
    expect(readFileSync(join(site, 'assets/custom.js'), 'utf8')).toContain(
      "new URL('mermaid.min.js', document.currentScript.src)",
    );
  });

  it('draws every diagram of the strategy pages as an SVG in headless Chromium, offline', async () => {
    browser = await chromium.launch({
      executablePath: '/usr/bin/chromium',
      args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
    });
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const elsewhere: string[] = [];
    await context.route(
      (url) => url.origin !== origin,
      (route) => {
        elsewhere.push(route.request().url());
        return route.abort('blockedbyclient');
      },
    );
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error' || message.type() === 'warning') problems.push(message.text());
    });
    page.on('pageerror', (error) => problems.push(String(error)));
    const drawn: Record<string, { width: number; height: number; labels: number }[]> = {};
    for (const guide of strategyPages) {
      await page.goto(`${origin}/${pageOf.get(guide)}`);
      // Evaluated in the page (a string: this project's types have no DOM).
      await page.waitForFunction(
        `document.querySelectorAll('pre.mermaid > svg').length === ${diagramsOf(guide).length}`,
        undefined,
        { timeout: 60_000 },
      );
      drawn[guide] = await page.$$eval('pre.mermaid > svg', (svgs) =>
        svgs.map((svg) => {
          const { width, height } = svg.getBoundingClientRect();
          return { width, height, labels: svg.querySelectorAll('text, foreignObject').length };
        }),
      );
    }
    // A diagram that failed to lay out is drawn empty (no size, no labels).
    const blank = Object.entries(drawn).flatMap(([guide, svgs]) =>
      svgs.filter((svg) => !(svg.width > 100 && svg.height > 30 && svg.labels >= 3)).map((svg) => ({ guide, ...svg })),
    );
    expect(Object.keys(drawn)).toEqual(strategyPages);
    expect(blank).toEqual([]);
    expect(problems).toEqual([]);
    expect(elsewhere).toEqual([]);
  }, 180_000);
});
