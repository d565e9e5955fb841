import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brokenLinks, markdownFilesUnder } from './package/markdown-links.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** The region of a test file, with its imports written as a user of the package writes them. */
function region(file: string, name: string): string {
  const source = readFileSync(resolve(root, file), 'utf8');
  const body = source.split(`// #region ${name}\n`)[1]?.split(`// #endregion ${name}`)[0];
  if (body === undefined) throw new Error(`no region ${name} in ${file}`);
  return body
    .replaceAll("'../../src/index.js'", "'nest-resilience'")
    .replaceAll("'../../src/testing/index.js'", "'nest-resilience/testing'")
    .replaceAll("'../../src/nest/terminus/index.js'", "'nest-resilience/terminus'")
    .trimEnd();
}

/** The first ```ts block after a heading of a docs page. */
function snippet(page: string, heading: string): string {
  const text = readFileSync(resolve(root, page), 'utf8');
  const section = text.split(`\n${heading}\n`)[1];
  const block = section?.split('```ts\n')[1]?.split('\n```')[0];
  if (block === undefined) throw new Error(`no ts block under ${heading} in ${page}`);
  return block.trimEnd();
}

describe('docs snippets that a test compiles and runs', () => {
  it('"Testing a Nest app" in docs/testing.md is the tested file', () => {
    expect(snippet('docs/testing.md', '## Testing a Nest app')).toBe(
      region('test/nest/testing-a-nest-app.e2e-spec.ts', 'testing-a-nest-app'),
    );
  });

  it('"Liveness and readiness" in docs/observability.md is the tested probes module', () => {
    expect(snippet('docs/observability.md', '### Liveness and readiness')).toBe(
      region('test/observability/health-probes.e2e-spec.ts', 'health-probes'),
    );
  });
});

describe('links in README.md and docs/', () => {
  const pages = ['README.md', 'CONTRIBUTING.md', 'ARCHITECTURE.md', ...markdownFilesUnder(root, 'docs')];

  it('point to files that exist and to headings that exist', () => {
    expect(brokenLinks(root, pages)).toEqual([]);
  });
});
