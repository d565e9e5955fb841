import { describe, expect, it } from '@jest/globals';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** The region of a test file, with its imports written as a user of the package writes them. */
function region(file: string, name: string): string {
  const source = readFileSync(resolve(root, file), 'utf8');
  const body = source.split(`// #region ${name}\n`)[1]?.split(`// #endregion ${name}`)[0];
  if (body === undefined) throw new Error(`no region ${name} in ${file}`);
  return body
    .replaceAll("'../../src/index.js'", "'nest-resilience'")
    .replaceAll("'../../src/testing/index.js'", "'nest-resilience/testing'")
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
});

describe('links in README.md and docs/', () => {
  /** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
  const anchor = (heading: string) =>
    heading
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N} _-]/gu, '')
      .replace(/ /g, '-');

  const pages = [
    'README.md',
    'CONTRIBUTING.md',
    'ARCHITECTURE.md',
    ...readdirSync(resolve(root, 'docs'))
      .filter((name) => name.endsWith('.md'))
      .map((name) => `docs/${name}`),
  ];

  it('point to files that exist and to headings that exist', () => {
    const broken: string[] = [];
    for (const page of pages) {
      const text = readFileSync(resolve(root, page), 'utf8').replace(/```[\s\S]*?```/g, '');
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/i.test(target)) continue; // https:, mailto:
        const [file, hash] = target.split('#');
        const path = file === '' ? resolve(root, page) : resolve(root, dirname(page), file);
        if (!existsSync(path)) {
          broken.push(`${page}: ${target} (no such file)`);
          continue;
        }
        if (hash && path.endsWith('.md')) {
          const headings = readFileSync(path, 'utf8')
            .split('\n')
            .filter((line) => /^#{1,6} /.test(line))
            .map((line) => anchor(line.replace(/^#+ /, '')));
          if (!headings.includes(hash)) broken.push(`${page}: ${target} (no such heading)`);
        }
      }
    }
    expect(broken).toEqual([]);
  });
});
