import { readFileSync, writeFileSync } from 'node:fs';

/** Replaces what stands between `<!-- name:start -->` and `<!-- name:end -->` in README.md. */
export function replaceReadmeSection(name: string, content: string): void {
  const readme = readFileSync('README.md', 'utf8');
  const pattern = new RegExp(`<!-- ${name}:start -->[\\s\\S]*<!-- ${name}:end -->`);
  if (!pattern.test(readme)) throw new Error(`README.md has no <!-- ${name}:start --> … <!-- ${name}:end --> section`);
  writeFileSync('README.md', readme.replace(pattern, `<!-- ${name}:start -->\n${content}\n<!-- ${name}:end -->`));
}
