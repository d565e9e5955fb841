import { readFileSync, writeFileSync } from 'node:fs';

const BENCHMARKS_PAGE = 'docs/benchmarks.md';

/**
 * Replaces what stands between `<!-- name:start -->` and `<!-- name:end -->` in docs/benchmarks.md, then
 * formats the page with the project's Prettier settings (so `npm run format:check` stays clean).
 */
export async function replaceReadmeSection(name: string, content: string): Promise<void> {
  const readme = readFileSync(BENCHMARKS_PAGE, 'utf8');
  const pattern = new RegExp(`<!-- ${name}:start -->[\\s\\S]*<!-- ${name}:end -->`);
  if (!pattern.test(readme))
    throw new Error(`${BENCHMARKS_PAGE} has no <!-- ${name}:start --> … <!-- ${name}:end --> section`);
  const replaced = readme.replace(pattern, () => `<!-- ${name}:start -->\n${content}\n<!-- ${name}:end -->`);
  const prettier = await import('prettier');
  const config = (await prettier.resolveConfig(BENCHMARKS_PAGE)) ?? {};
  writeFileSync(BENCHMARKS_PAGE, await prettier.format(replaced, { ...config, filepath: BENCHMARKS_PAGE }));
}
