// Finds the relative links of markdown pages and checks each: the file it names exists (inside `root`,
// so a link cannot lean on a file next to the package) and, for a markdown page, the #anchor names one of
// its headings. Used on the repository and on the package as installed from the tarball.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
export function headingAnchor(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors of a markdown page's headings (outside code fences). */
export function anchorsOf(path: string): string[] {
  return readFileSync(path, 'utf8')
    .replace(/```[\s\S]*?```/g, '')
    .split('\n')
    .filter((line) => /^#{1,6} /.test(line))
    .map((line) => headingAnchor(line.replace(/^#+ /, '')));
}

/** The markdown files under `dir` (relative to `root`), recursively, in name order. */
export function markdownFilesUnder(root: string, dir: string): string[] {
  const found: string[] = [];
  const walk = (folder: string) => {
    for (const name of readdirSync(join(root, folder)).sort()) {
      const path = `${folder}/${name}`;
      if (statSync(join(root, path)).isDirectory()) walk(path);
      else if (name.endsWith('.md')) found.push(path);
    }
  };
  if (existsSync(join(root, dir))) walk(dir);
  return found;
}

/** The relative link targets of a markdown page (code blocks and inline code excluded). */
export function relativeLinks(text: string): string[] {
  const prose = text.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
  return [...prose.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((match) => match[1])
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

/** Every broken relative link of `pages` (paths relative to `root`), as `page: target (why)`. */
export function brokenLinks(root: string, pages: readonly string[]): string[] {
  const broken: string[] = [];
  for (const page of pages) {
    for (const target of relativeLinks(readFileSync(join(root, page), 'utf8'))) {
      const [file, hash] = target.split('#');
      const path = file === '' ? resolve(root, page) : resolve(root, dirname(page), decodeURI(file));
      if (relative(root, path).startsWith(`..${sep}`) || relative(root, path) === '..') {
        broken.push(`${page}: ${target} (outside the package)`);
      } else if (!existsSync(path)) {
        broken.push(`${page}: ${target} (no such file)`);
      } else if (hash && path.endsWith('.md') && !anchorsOf(path).includes(hash)) {
        broken.push(`${page}: ${target} (no such heading)`);
      }
    }
  }
  return broken;
}
