// Packs the library the way `npm publish` would and installs the tarball into throw-away apps outside the
// repository, as a user's project would get it. Every app's dependencies come from this repository's
// lock file at the same versions (the npm cache already holds them after `npm ci`), through a lock file
// written for the app, so `npm ci --prefer-offline` installs exactly those packages and nothing else.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export const repoRoot = resolve(import.meta.dirname, '../..');
const tscBin = join(repoRoot, 'node_modules/typescript/bin/tsc');

interface LockEntry {
  version?: string;
  resolved?: string;
  integrity?: string;
  license?: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  bin?: unknown;
  engines?: unknown;
  os?: unknown;
  cpu?: unknown;
  hasInstallScript?: boolean;
  [key: string]: unknown;
}

interface Lock {
  packages: Record<string, LockEntry>;
}

export interface PackedPackage {
  tarball: string;
  fileCount: number;
  size: number;
  unpackedSize: number;
  files: string[];
}

/** `npm pack` of the repository (its `prepack` cleans and builds `dist/`) into `destination`. */
export async function packLibrary(destination: string): Promise<PackedPackage> {
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', destination], {
    cwd: repoRoot,
    maxBuffer: 64 * 1024 * 1024,
  });
  // The lifecycle scripts' banners come first; the report is the JSON array that starts a line.
  const [info] = JSON.parse(stdout.slice(stdout.search(/^\[/m))) as {
    filename: string;
    entryCount: number;
    size: number;
    unpackedSize: number;
    files: { path: string }[];
  }[];
  return {
    tarball: join(destination, info.filename),
    fileCount: info.entryCount,
    size: info.size,
    unpackedSize: info.unpackedSize,
    files: info.files.map((file) => file.path),
  };
}

function readRepoLock(): Lock {
  return JSON.parse(readFileSync(join(repoRoot, 'package-lock.json'), 'utf8')) as Lock;
}

/** Where Node would find `name` when required from the package installed at `from` (a lock-file path). */
function resolveInLock(packages: Lock['packages'], from: string, name: string): string | undefined {
  let base = from;
  for (;;) {
    const candidate = `${base === '' ? '' : `${base}/`}node_modules/${name}`;
    if (packages[candidate]) return candidate;
    if (base === '') return undefined;
    const cut = base.lastIndexOf('/node_modules/');
    base = cut === -1 ? '' : base.slice(0, cut);
  }
}

/** The lock entries `names` need (themselves and everything they depend on), from this repository's lock. */
function closureOf(lock: Lock, names: readonly string[]): Record<string, LockEntry> {
  const picked: Record<string, LockEntry> = {};
  const queue: string[] = [];
  for (const name of names) {
    const path = resolveInLock(lock.packages, '', name);
    if (!path) throw new Error(`${name} is not in package-lock.json: the package test only installs locked packages`);
    queue.push(path);
  }
  while (queue.length > 0) {
    const path = queue.pop()!;
    if (picked[path]) continue;
    const entry = { ...lock.packages[path] };
    for (const flag of ['dev', 'optional', 'devOptional', 'peer', 'extraneous']) delete entry[flag];
    picked[path] = entry;
    const needed = {
      ...entry.dependencies,
      ...entry.optionalDependencies,
      ...Object.fromEntries(
        Object.entries(entry.peerDependencies ?? {}).filter(([peer]) => !entry.peerDependenciesMeta?.[peer]?.optional),
      ),
    };
    for (const dependency of Object.keys(needed)) {
      const found = resolveInLock(lock.packages, path, dependency);
      if (found) queue.push(found);
      else if (!entry.optionalDependencies?.[dependency]) {
        throw new Error(`${path} needs ${dependency}, which package-lock.json does not hold`);
      }
    }
  }
  return picked;
}

export interface ConsumerApp {
  dir: string;
  /** Type-checks the app with `strict` and `skipLibCheck: false`; resolves to tsc's output (empty when clean). */
  typeCheck(files: readonly string[]): Promise<{ ok: boolean; output: string }>;
  /** Runs a compiled entry with Node; resolves to its stdout. */
  runNode(file: string, env?: Record<string, string>): Promise<string>;
}

/** The compiler options every consumer app uses: what a strict NestJS 12 project has. */
export const consumerCompilerOptions = {
  target: 'ES2022',
  lib: ['ES2023'],
  module: 'nodenext',
  moduleResolution: 'nodenext',
  experimentalDecorators: true,
  emitDecoratorMetadata: true,
  strict: true,
  skipLibCheck: false,
  esModuleInterop: true,
  types: ['node'],
  outDir: 'out',
  rootDir: 'src',
};

/**
 * A fresh app in `dir` with the tarball and exactly `peers` (plus `@types/node`) installed by
 * `npm ci --prefer-offline` from a lock file cut out of this repository's.
 */
export async function createConsumerApp(
  dir: string,
  tarball: string,
  peers: readonly string[],
  scripts: Record<string, string> = {},
): Promise<ConsumerApp> {
  mkdirSync(join(dir, 'src'), { recursive: true });
  const lock = readRepoLock();
  const installed = closureOf(lock, [...peers, '@types/node']);
  const dependencies: Record<string, string> = { 'nest-resilience': `file:${relative(dir, tarball)}` };
  for (const name of [...peers, '@types/node']) dependencies[name] = installed[`node_modules/${name}`].version!;
  const library = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as LockEntry & { name: string };
  const integrity = `sha512-${createHash('sha512').update(readFileSync(tarball)).digest('base64')}`;
  const manifest = { name: 'consumer-app', version: '1.0.0', private: true, type: 'module', scripts, dependencies };
  const appLock = {
    name: manifest.name,
    version: manifest.version,
    lockfileVersion: 3,
    requires: true,
    packages: {
      '': { name: manifest.name, version: manifest.version, dependencies },
      'node_modules/nest-resilience': {
        version: library.version,
        resolved: `file:${relative(dir, tarball)}`,
        integrity,
        license: library.license,
        engines: library.engines,
        peerDependencies: library.peerDependencies,
        peerDependenciesMeta: library.peerDependenciesMeta,
      },
      ...installed,
    },
  };
  writeFileSync(join(dir, 'package.json'), JSON.stringify(manifest, null, 2));
  writeFileSync(join(dir, 'package-lock.json'), JSON.stringify(appLock, null, 2));
  await run('npm', ['ci', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts', '--loglevel=error'], {
    cwd: dir,
  });
  return {
    dir,
    async typeCheck(files) {
      const config = { compilerOptions: consumerCompilerOptions, files: files.map((file) => `src/${file}`) };
      writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify(config, null, 2));
      try {
        await run(process.execPath, [tscBin, '-p', 'tsconfig.json', '--pretty', 'false'], { cwd: dir });
        return { ok: true, output: '' };
      } catch (error) {
        const { stdout, stderr } = error as { stdout: string; stderr: string };
        return { ok: false, output: `${stdout}${stderr}` };
      }
    },
    async runNode(file, env = {}) {
      const { stdout } = await run(process.execPath, [file], { cwd: dir, env: { ...process.env, ...env } });
      return stdout;
    },
  };
}

const STATIC_IMPORT = /^\s*(?:import|export)\s(?:[^;]*?\sfrom\s)?\s*['"]([^'"]+)['"]/gm;
const TYPE_IMPORT = /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;

function packageOf(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

/**
 * The packages that the files reachable from `entry` (a `.js` or `.d.ts` file) import: static `import`
 * and `export … from` statements, and in declarations `import("…")` types too. Dynamic `import()` of
 * JavaScript is lazy and not followed. Maps each package to the first file that imports it.
 */
export function packagesReachableFrom(entry: string): Map<string, string> {
  const declarations = entry.endsWith('.d.ts');
  const found = new Map<string, string>();
  const seen = new Set<string>();
  const queue = [resolve(entry)];
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    const text = readFileSync(file, 'utf8');
    const specifiers = [...text.matchAll(STATIC_IMPORT)].map((match) => match[1]);
    if (declarations) specifiers.push(...[...text.matchAll(TYPE_IMPORT)].map((match) => match[1]));
    for (const specifier of specifiers) {
      if (specifier.startsWith('.')) {
        const target = join(file, '..', specifier);
        queue.push(declarations ? target.replace(/\.js$/, '.d.ts') : target);
      } else if (!specifier.startsWith('node:')) {
        const name = packageOf(specifier);
        if (!found.has(name)) found.set(name, relative(join(entry, '..'), file));
      }
    }
  }
  return found;
}

/** The packages installed in an app, read from its `node_modules`. */
export function installedPackages(dir: string): string[] {
  const lock = JSON.parse(readFileSync(join(dir, 'node_modules/.package-lock.json'), 'utf8')) as Lock;
  return Object.keys(lock.packages)
    .filter((path) => path.startsWith('node_modules/') && !path.slice('node_modules/'.length).includes('node_modules/'))
    .map((path) => path.slice('node_modules/'.length));
}
