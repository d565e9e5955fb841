// The package as a user gets it: `npm pack` (which builds through `prepack`), lint of the tarball with
// publint and Are the Types Wrong, then fresh apps outside the repository that install the tarball with
// only the peers each needs, type-check with `strict` and `skipLibCheck: false`, and run. Last, every
// TypeScript snippet of README.md and docs/ compiles against the installed package.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, normalize } from 'node:path';
import { promisify } from 'node:util';
import { consumerApps, ENTRY_PEERS, NEST_PEERS, OPTIONAL_PEERS } from './consumer-apps.js';
import { brokenLinks, markdownFilesUnder, relativeLinks } from './markdown-links.js';
import { documentationFiles, extractSnippets } from './markdown-snippets.js';
import {
  createConsumerApp,
  installedPackages,
  packagesReachableFrom,
  packLibrary,
  repoRoot,
  type ConsumerApp,
  type PackedPackage,
} from './package.util.js';

const run = promisify(execFile);
const bin = (name: string) => join(repoRoot, 'node_modules/.bin', name);

/** Packages the documentation's snippets import besides the library's peers. */
const SNIPPET_PACKAGES = [
  ...NEST_PEERS,
  '@nestjs/axios',
  'axios',
  'ioredis',
  'openid-client',
  'jose',
  '@nestjs/testing',
  '@jest/globals',
  '@nestjs/platform-express',
  'cockatiel',
  'opossum',
  '@types/opossum',
  '@opentelemetry/api',
  '@opentelemetry/sdk-metrics',
  '@nestjs/terminus',
  '@nestjs/microservices',
  '@nestjs/config',
];

/**
 * The example projects of examples/: each manifest says what it installs and how it runs its tests. One
 * install holds the packages of them all; each project runs in a folder of its own inside it, its
 * `node_modules` a link to the shared one (so `npm test` runs as in the project itself).
 */
const EXAMPLES = {
  'jest-esm': { files: ['jest.config.js', 'tsconfig.json', 'src', 'test'], passed: /Tests: +4 passed, 4 total/ },
  'vitest-esm': { files: ['vitest.config.ts', 'tsconfig.json', 'src', 'test'], passed: /Tests +3 passed \(3\)/ },
} as const;
type ExampleName = keyof typeof EXAMPLES;
interface ExampleManifest {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
}
const exampleManifests = Object.fromEntries(
  Object.keys(EXAMPLES).map((name) => [
    name,
    JSON.parse(readFileSync(join(repoRoot, 'examples', name, 'package.json'), 'utf8')) as ExampleManifest,
  ]),
) as Record<ExampleName, ExampleManifest>;
let examplesApp: ConsumerApp;

let workDir: string;
let packed: PackedPackage;
// tsc over an installed package takes seconds on a quiet machine and can take a minute on a busy one.
const TYPE_CHECK_TIMEOUT = 120_000;
const apps = new Map<string, ConsumerApp>();
let docsApp: ConsumerApp;
const timings: Record<string, number> = {};

async function timed<T>(label: string, work: () => Promise<T>): Promise<T> {
  const started = Date.now();
  try {
    return await work();
  } finally {
    timings[label] = Date.now() - started;
  }
}

/**
 * Runs each piece of work given to it with at most `limit` running at once, in the order given. The type
 * checks of the apps are independent: they start as soon as the installs are done, two at a time, and
 * each test awaits its own (a failure is still that test's).
 */
function limited(limit: number): <T>(work: () => Promise<T>) => Promise<T> {
  let running = 0;
  const waiting: (() => void)[] = [];
  return <T>(work: () => Promise<T>) =>
    new Promise<T>((resolve, reject) => {
      const start = () => {
        running++;
        work()
          .then(resolve, reject)
          .finally(() => {
            running--;
            waiting.shift()?.();
          });
      };
      if (running < limit) start();
      else waiting.push(start);
    });
}

/** Marks a promise handled (its test awaits it later), so a failure is reported there, not as unhandled. */
function started<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => undefined);
  return promise;
}

const TYPE_CHECKS_AT_ONCE = 2;
const appChecks = new Map<string, Promise<{ ok: boolean; output: string }>>();
const exampleChecks = new Map<ExampleName, Promise<string>>();
let snippetCheck: Promise<{ ok: boolean; output: string }>;
const snippets = documentationFiles(repoRoot).flatMap((document) => extractSnippets(repoRoot, document));

/** Starts every type check once the apps are installed: the consumer apps, the examples, the snippets. */
function startTypeChecks(): void {
  const slot = limited(TYPE_CHECKS_AT_ONCE);
  for (const definition of consumerApps) {
    const app = apps.get(definition.name)!;
    writeFileSync(join(app.dir, 'src/main.ts'), definition.source);
    appChecks.set(
      definition.name,
      started(slot(() => timed(`tsc ${definition.name}`, () => app.typeCheck(['main.ts'])))),
    );
  }
  for (const name of Object.keys(EXAMPLES) as ExampleName[]) {
    const dir = join(examplesApp.dir, name);
    mkdirSync(dir);
    for (const entry of ['package.json', ...EXAMPLES[name].files]) {
      cpSync(join(repoRoot, 'examples', name, entry), join(dir, entry), { recursive: true });
    }
    symlinkSync(join(examplesApp.dir, 'node_modules'), join(dir, 'node_modules'), 'dir');
    const tsc = join(dir, 'node_modules/typescript/bin/tsc');
    const check = () =>
      timed(`tsc ${name} example`, () =>
        run(process.execPath, [tsc, '-p', 'tsconfig.json', '--pretty', 'false'], { cwd: dir }).then(
          () => '',
          (error: { stdout: string; stderr: string }) => `${error.stdout}${error.stderr}`,
        ),
      );
    exampleChecks.set(name, started(slot(check)));
  }
  for (const snippet of snippets) writeFileSync(join(docsApp.dir, 'src', snippet.fileName), snippet.code);
  snippetCheck = started(
    slot(() => timed('tsc snippets', () => docsApp.typeCheck(snippets.map((snippet) => snippet.fileName)))),
  );
}

beforeAll(async () => {
  workDir = mkdtempSync(join(tmpdir(), 'nest-resilience-package-'));
  packed = await timed('pack (clean build)', () => packLibrary(workDir));
  await timed('install apps', async () => {
    const installs = [
      // In parallel: each label times one install while the others run (the longest is the wall time).
      ...consumerApps.map(async (app) => {
        const installed = await timed(`install ${app.name}`, () =>
          createConsumerApp(join(workDir, app.name), packed.tarball, app.peers),
        );
        apps.set(app.name, installed);
      }),
      (async () => {
        // Their dependencies but the library itself, at this repository's locked versions.
        const packages = [
          ...new Set(Object.values(exampleManifests).flatMap((manifest) => Object.keys(manifest.devDependencies))),
        ];
        examplesApp = await timed('install examples', () =>
          createConsumerApp(join(workDir, 'examples'), packed.tarball, packages),
        );
      })(),
      (async () => {
        docsApp = await timed('install docs', () =>
          createConsumerApp(join(workDir, 'docs'), packed.tarball, SNIPPET_PACKAGES),
        );
      })(),
    ];
    await Promise.all(installs);
  });
  startTypeChecks();
}, 300_000);

afterAll(() => {
  process.stdout.write(
    `package test: ${packed?.fileCount} files, ${packed?.size} bytes packed (${packed?.unpackedSize} unpacked); ` +
      `${Object.entries(timings)
        .map(([label, ms]) => `${label} ${(ms / 1000).toFixed(1)} s`)
        .join(', ')}\n`,
  );
  if (workDir) rmSync(workDir, { recursive: true, force: true });
});

describe('the tarball', () => {
  it('holds the build of every entry, the license, the readme, the guides and the changelog, and no tests', () => {
    const manifest = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
      exports: Record<string, string | Record<string, string>>;
    };
    const targets = Object.values(manifest.exports).flatMap((target) =>
      typeof target === 'string' ? [target] : Object.values(target),
    );
    for (const target of targets) expect(packed.files).toContain(normalize(target));
    for (const file of [
      'LICENSE',
      'README.md',
      'CHANGELOG.md',
      'package.json',
      'docs/strategies.md',
      'docs/images/dashboard.png',
    ]) {
      expect(packed.files).toContain(file);
    }
    expect(packed.files.filter((file) => /(^|\/)test\/|\.spec\.|^sample-app\/|(^|\/)bench\//.test(file))).toEqual([]);
  });

  it('ships every source file its source maps and declaration maps point at', () => {
    const maps = packed.files.filter((file) => file.endsWith('.map'));
    expect(maps.length).toBeGreaterThan(100);
    const missing: string[] = [];
    for (const map of maps) {
      const { sources } = JSON.parse(readFileSync(join(repoRoot, map), 'utf8')) as { sources: string[] };
      for (const source of sources) {
        const target = normalize(join(dirname(map), source));
        if (!packed.files.includes(target)) missing.push(`${map} -> ${target}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('passes publint --strict', async () => {
    const { stdout } = await timed('publint', () => run(bin('publint'), ['run', packed.tarball, '--strict']));
    expect(stdout).toContain('All good!');
  });

  it('passes Are the Types Wrong for an ESM-only package', async () => {
    // Exits non-zero on any problem that matters to ESM consumers (node16 from ESM, bundler); the
    // CommonJS and node10 resolutions are out of scope for an ESM-only package and reported as ignored.
    const { stdout } = await timed('attw', () => run(bin('attw'), [packed.tarball, '--profile', 'esm-only']));
    const problems = stdout.split('\n').filter((line) => /[❌💀🥴🐛❗]|⚠️/u.test(line) && !line.includes('ignored'));
    expect(problems).toEqual([]);
    expect(stdout).toMatch(/node16 \(from ESM\): 🟢 \(ESM\)/u);
  });
});

describe('the guides as installed from the tarball', () => {
  const installed = () => join(apps.get('core-only')!.dir, 'node_modules/nest-resilience');
  const pages = () => ['README.md', ...markdownFilesUnder(installed(), 'docs')];

  it('are shipped: every page of docs/ and the images they show', () => {
    const shipped = pages();
    expect(shipped).toEqual(['README.md', ...markdownFilesUnder(repoRoot, 'docs')]);
    expect(shipped.length).toBeGreaterThan(10);
  });

  it('link only to files inside the installed package, and to headings that exist', () => {
    const links = pages().flatMap((page) => relativeLinks(readFileSync(join(installed(), page), 'utf8')));
    expect(links.length).toBeGreaterThan(50);
    expect(brokenLinks(installed(), pages())).toEqual([]);
  });
});

describe('the install table of README.md', () => {
  it('lists, for every entry point, exactly the peers the package test holds it to', () => {
    const readme = readFileSync(join(repoRoot, 'README.md'), 'utf8');
    const section = readme.slice(
      readme.indexOf('## Install'),
      readme.indexOf('\n## ', readme.indexOf('## Install') + 1),
    );
    const table: Record<string, string[]> = {};
    for (const row of section.split('\n').filter((line) => line.startsWith('| `'))) {
      const [imports, , peers] = row.split('|').slice(1, 4);
      const names = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map((match) => match[1]);
      const needed = [...(peers.includes('the NestJS set above') ? NEST_PEERS : []), ...names(peers)];
      for (const name of names(imports)) {
        const entry = name === 'nest-resilience' ? '.' : `./${name.replace(/^(nest-resilience)?\//, '')}`;
        table[entry] = needed.sort();
      }
    }
    const expected = Object.fromEntries(
      Object.entries(ENTRY_PEERS).map(([entry, peers]) => [entry, [...peers].sort()]),
    );
    expect(table).toEqual(expected);
  });
});

describe.each(Object.entries(ENTRY_PEERS))('the entry point %s', (entry, peers) => {
  const target = (condition: 'types' | 'default') => {
    const manifest = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
      exports: Record<string, Record<string, string>>;
    };
    return join(apps.get('core-only')!.dir, 'node_modules/nest-resilience', manifest.exports[entry][condition]);
  };
  const describeImports = (found: Map<string, string>) =>
    [...found].filter(([name]) => !peers.includes(name)).map(([name, file]) => `${file} imports ${name}`);

  it(`has declarations that name no package but its peers (${peers.join(', ') || 'none'})`, () => {
    expect(describeImports(packagesReachableFrom(target('types')))).toEqual([]);
  });

  it('loads no package but its peers when imported (others only lazily, when configured)', () => {
    expect(describeImports(packagesReachableFrom(target('default')))).toEqual([]);
  });
});

describe('the consumer apps', () => {
  it('hold every optional peer of package.json to its own apps', () => {
    const manifest = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
      peerDependenciesMeta: Record<string, { optional?: boolean }>;
    };
    const optional = Object.keys(manifest.peerDependenciesMeta).filter(
      (name) => manifest.peerDependenciesMeta[name].optional,
    );
    expect([...OPTIONAL_PEERS].sort()).toEqual(optional.sort());
  });

  it('import every entry point between them', () => {
    const imported = (source: string) =>
      [...source.matchAll(/from '(nest-resilience(?:\/[^']+)?)'/g)].map(([, specifier]) =>
        specifier === 'nest-resilience' ? '.' : `./${specifier.slice('nest-resilience/'.length)}`,
      );
    const covered = new Set(consumerApps.flatMap((app) => imported(app.source)));
    expect(Object.keys(ENTRY_PEERS).filter((entry) => !covered.has(entry))).toEqual([]);
  });
});

describe.each(consumerApps)('a $name app (peers: $peers)', (definition) => {
  const app = () => apps.get(definition.name)!;

  it('has only the packages it installed: no optional peer it did not ask for', () => {
    const present = installedPackages(app().dir);
    expect(present).toContain('nest-resilience');
    expect(OPTIONAL_PEERS.filter((peer) => present.includes(peer)).sort()).toEqual(
      OPTIONAL_PEERS.filter((peer) => definition.peers.includes(peer)).sort(),
    );
  });

  it(
    'type-checks with strict and skipLibCheck: false',
    async () => {
      const result = await appChecks.get(definition.name)!;
      expect(result.output).toBe('');
    },
    TYPE_CHECK_TIMEOUT,
  );

  it('runs and prints what it should', async () => {
    expect(existsSync(join(app().dir, 'out/main.js'))).toBe(true);
    const output = await timed(`run ${definition.name}`, () => app().runNode('out/main.js'));
    expect(JSON.parse(output)).toEqual(definition.expected);
  });
});

describe.each(Object.keys(EXAMPLES) as ExampleName[])('the example project examples/%s', (name) => {
  const dir = () => join(examplesApp.dir, name);

  it('depends on the library and on packages this repository locks', () => {
    expect(Object.keys(exampleManifests[name].dependencies)).toEqual(['nest-resilience']);
    for (const dependency of Object.keys(exampleManifests[name].devDependencies)) {
      expect(existsSync(join(examplesApp.dir, 'node_modules', dependency, 'package.json'))).toBe(true);
    }
  });

  it(
    'type-checks with its own tsconfig (strict, skipLibCheck: false) against the installed package',
    async () => {
      expect(await exampleChecks.get(name)!).toBe('');
    },
    TYPE_CHECK_TIMEOUT,
  );

  it(
    'passes its own `npm test` with the test kit',
    async () => {
      expect(existsSync(join(dir(), 'test'))).toBe(true);
      const { stdout, stderr } = await timed(`npm test ${name} example`, () =>
        run('npm', ['test', '--silent'], { cwd: dir(), env: { ...process.env, CI: 'true', NO_COLOR: '1' } }),
      );
      expect(`${stdout}${stderr}`).toMatch(EXAMPLES[name].passed);
    },
    TYPE_CHECK_TIMEOUT,
  );
});

describe('the documentation snippets', () => {
  it('are found in README.md and docs/', () => {
    expect(snippets.length).toBeGreaterThan(10);
    expect(new Set(snippets.map((snippet) => snippet.document))).toContain('README.md');
  });

  it(
    'each compile against the installed package, with the imports written in the snippet',
    async () => {
      const result = await snippetCheck;
      const byFile = new Map(snippets.map((snippet) => [`src/${snippet.fileName}`, snippet]));
      const errors = result.output
        .split('\n')
        .filter((line) => line.trim() !== '')
        .map((line) => {
          const match = /^(src\/[^()]+)\((\d+),(\d+)\): (.*)$/.exec(line);
          const snippet = match && byFile.get(match[1]);
          if (!match || !snippet) return line;
          return `${snippet.document}:${snippet.line + Number(match[2])}:${match[3]} ${match[4]}`;
        });
      expect(errors).toEqual([]);
    },
    TYPE_CHECK_TIMEOUT,
  );
});
