import { readFileSync, writeFileSync } from 'node:fs';

const BENCHMARKS_PAGE = 'docs/benchmarks.md';

/** Replaces what stands between `<!-- name:start -->` and `<!-- name:end -->` in docs/benchmarks.md. */
export function replaceReadmeSection(name: string, content: string): void {
  const readme = readFileSync(BENCHMARKS_PAGE, 'utf8');
  const pattern = new RegExp(`<!-- ${name}:start -->[\\s\\S]*<!-- ${name}:end -->`);
  if (!pattern.test(readme))
    throw new Error(`${BENCHMARKS_PAGE} has no <!-- ${name}:start --> … <!-- ${name}:end --> section`);
  writeFileSync(BENCHMARKS_PAGE, readme.replace(pattern, `<!-- ${name}:start -->\n${content}\n<!-- ${name}:end -->`));
}
