import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { documentationFiles, extractSnippets } from './markdown-snippets.js';

describe('the documentation snippet extractor', () => {
  let root: string;

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'nest-resilience-snippets-'));
    mkdirSync(join(root, 'docs'));
  });

  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('reads README.md first, then every page of docs/ in name order, and nothing else', () => {
    writeFileSync(join(root, 'README.md'), '');
    writeFileSync(join(root, 'docs/testing.md'), '');
    writeFileSync(join(root, 'docs/http.md'), '');
    writeFileSync(join(root, 'docs/notes.txt'), '');
    expect(documentationFiles(root)).toEqual(['README.md', 'docs/http.md', 'docs/testing.md']);
  });

  it('reads the pages of docs/ subfolders after the page of the same name', () => {
    writeFileSync(join(root, 'README.md'), '');
    writeFileSync(join(root, 'docs/strategies.md'), '');
    mkdirSync(join(root, 'docs/strategies'));
    writeFileSync(join(root, 'docs/strategies/retry.md'), '');
    writeFileSync(join(root, 'docs/testing.md'), '');
    expect(documentationFiles(root)).toEqual([
      'README.md',
      'docs/strategies.md',
      'docs/strategies/retry.md',
      'docs/testing.md',
    ]);
  });

  it('takes ts and typescript fences with their line, skips `ts ignore` and other languages', () => {
    writeFileSync(
      join(root, 'docs/guide.md'),
      [
        '# Guide', // 1
        '```ts', // 2
        "import { a } from 'x';", // 3
        '```', // 4
        '```sh', // 5
        'npm test', // 6
        '```', // 7
        '```ts ignore', // 8
        'fragment(…);', // 9
        '```', // 10
        '```typescript', // 11
        'const b = 1;', // 12
        '```', // 13
      ].join('\n'),
    );
    const snippets = extractSnippets(root, 'docs/guide.md');
    expect(snippets.map(({ location, fileName, line }) => ({ location, fileName, line }))).toEqual([
      { location: 'docs/guide.md:2', fileName: 'docs-guide-2.ts', line: 2 },
      { location: 'docs/guide.md:11', fileName: 'docs-guide-11.ts', line: 11 },
    ]);
    // Snippet line n is markdown line `line + n`: the code starts right after the fence.
    expect(snippets[0].code.split('\n')[0]).toBe("import { a } from 'x';");
    // Every snippet is a module, so top-level await and its own declarations work.
    expect(snippets[1].code).toBe('const b = 1;\nexport {};\n');
  });

  it('takes fences indented in a list, without the indentation', () => {
    writeFileSync(join(root, 'README.md'), ['- item', '', '  ```ts', '  const c = 2;', '  ```'].join('\n'));
    const [snippet] = extractSnippets(root, 'README.md');
    expect(snippet.location).toBe('README.md:3');
    expect(snippet.code).toBe('const c = 2;\nexport {};\n');
  });
});
