// Finds the TypeScript snippets of the user documentation (README.md and docs/*.md) so a test can compile
// each against the packed library. A fence written ```ts ignore is a fragment and is left out.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface MarkdownSnippet {
  /** Where it is, for error messages: `docs/nestjs.md:12` (the fence's line). */
  location: string;
  /** A file name for it: `docs-nestjs-12.ts`. */
  fileName: string;
  /** Line of the fence in the markdown file (1-based); snippet line n is markdown line `line + n`. */
  line: number;
  document: string;
  code: string;
}

const FENCE = /^(\s*)```(ts|typescript)(?:\s+(.*))?$/;

export function documentationFiles(root: string): string[] {
  const pagesOf = (folder: string): string[] =>
    readdirSync(join(root, folder), { withFileTypes: true })
      // A folder after the page of its name: `strategies.md`, then `strategies/…` ('.' sorts before '/').
      .map((entry) => ({ entry, key: entry.isDirectory() ? `${entry.name}/` : entry.name }))
      .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
      .map(({ entry }) => entry)
      .flatMap((entry) => {
        if (entry.isDirectory()) return pagesOf(`${folder}/${entry.name}`);
        return entry.name.endsWith('.md') ? [`${folder}/${entry.name}`] : [];
      });
  return ['README.md', ...pagesOf('docs')];
}

export function extractSnippets(root: string, document: string): MarkdownSnippet[] {
  const lines = readFileSync(join(root, document), 'utf8').split('\n');
  const snippets: MarkdownSnippet[] = [];
  for (let index = 0; index < lines.length; index++) {
    const match = FENCE.exec(lines[index]);
    if (!match) continue;
    const [, indent, , info] = match;
    const start = index;
    const body: string[] = [];
    for (index++; index < lines.length && lines[index].trim() !== '```'; index++) {
      body.push(lines[index].startsWith(indent) ? lines[index].slice(indent.length) : lines[index]);
    }
    if (info?.split(/\s+/).includes('ignore')) continue;
    const line = start + 1;
    snippets.push({
      location: `${document}:${line}`,
      fileName: `${document.replace(/\.md$/, '').replace(/[^A-Za-z0-9]+/g, '-')}-${line}.ts`,
      line,
      document,
      code: `${body.join('\n')}\nexport {};\n`,
    });
  }
  return snippets;
}
