import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parse, stringify } from 'yaml';

/** The project's root (the tests run from it). */
export const ROOT = resolve(process.cwd());
const SCRIPT = join(ROOT, 'scripts', 'start-cluster.mjs');

/**
 * The sample compiled into a folder of its own, so the fleet never runs from `dist/` (which `npm pack`
 * deletes and rebuilds while the tests run). The folder lies under node_modules/.cache so the compiled
 * files resolve the project's packages. It is compiled once per state of the sources (a hash of
 * `src/`, `sample-app/` and the build settings names the folder), and shared by every test file that
 * needs it; what a test writes (a config file, an entry) goes to a folder of its own.
 */
export class SampleBuild {
  readonly dir: string;
  readonly entry: string;
  /** This user's files (config copies, entries); removed by `dispose()`. */
  private readonly workDir: string;

  private constructor(dir: string, workDir: string) {
    this.dir = dir;
    this.entry = join(dir, 'sample-app', 'main.js');
    this.workDir = workDir;
  }

  static async compile(): Promise<SampleBuild> {
    const cache = join(ROOT, 'node_modules', '.cache');
    mkdirSync(cache, { recursive: true });
    const dir = join(cache, `sample-build-${sourcesHash()}`);
    if (!existsSync(join(dir, '.complete'))) await compileOnce(cache, dir);
    return new SampleBuild(dir, mkdtempSync(join(cache, 'sample-work-')));
  }

  /**
   * An entry of this user's own that runs the sample: the build is shared by every test file (and other
   * Jest processes may run it at the same time), so "no process mentions the entry" is only this user's
   * question with a path of its own.
   */
  ownEntry(): string {
    const path = join(this.workDir, 'main.mjs');
    writeFileSync(path, `await import(${JSON.stringify(pathToFileURL(this.entry).href)});\n`);
    return path;
  }

  /** An entry that fails at once on the instance whose PORT is `CLUSTER_TEST_CRASH_PORT`, else runs the sample. */
  crashingEntry(): string {
    const path = join(this.workDir, 'crash-on-port.mjs');
    writeFileSync(
      path,
      [
        'if (process.env.PORT === process.env.CLUSTER_TEST_CRASH_PORT) {',
        "  process.stderr.write('simulated start-up failure\\n');",
        '  process.exit(3);',
        '}',
        `await import(${JSON.stringify(pathToFileURL(this.entry).href)});`,
        '',
      ].join('\n'),
    );
    return path;
  }

  /** A copy of the sample's resilience file with `edit` applied; returns its path. */
  resilienceFile(edit: (doc: { pipelines: Record<string, Record<string, unknown>> }) => void): string {
    const doc = parse(readFileSync(join(ROOT, 'sample-app', 'config', 'resilience.yaml'), 'utf8')) as {
      pipelines: Record<string, Record<string, unknown>>;
    };
    edit(doc);
    const path = join(this.workDir, 'resilience.yaml');
    writeFileSync(path, stringify(doc));
    return path;
  }

  dispose(): void {
    rmSync(this.workDir, { recursive: true, force: true });
  }
}

/** A hash of everything the compiled sample depends on. */
function sourcesHash(): string {
  const hash = createHash('sha256');
  const add = (path: string): void => {
    for (const entry of readdirSync(path, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const full = join(path, entry.name);
      if (entry.isDirectory()) add(full);
      else hash.update(relative(ROOT, full)).update('\0').update(readFileSync(full)).update('\0');
    }
  };
  add(join(ROOT, 'src'));
  add(join(ROOT, 'sample-app'));
  for (const file of ['tsconfig.json', 'tsconfig.build.json', 'package.json'])
    hash.update(readFileSync(join(ROOT, file)));
  return hash.digest('hex').slice(0, 16);
}

/** Compiles the sample into a fresh folder, then moves it to `dir` (another test file may have won the race). */
/**
 * Compiles into `dir` unless another test process is compiling the same sources already (a lock folder
 * beside it): then waits for that build instead of doing the same work again on the same cores. A lock
 * older than ten minutes is taken over (its process died).
 */
async function compileOnce(cache: string, dir: string): Promise<void> {
  const lock = `${dir}.lock`;
  for (;;) {
    if (existsSync(join(dir, '.complete'))) return;
    try {
      mkdirSync(lock);
      break;
    } catch {
      try {
        if (Date.now() - statSync(lock).mtimeMs > 600_000) rmSync(lock, { recursive: true, force: true });
      } catch {
        // released meanwhile
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
  try {
    if (!existsSync(join(dir, '.complete'))) await compileInto(cache, dir);
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

async function compileInto(cache: string, dir: string): Promise<void> {
  const build = mkdtempSync(join(cache, 'sample-compiling-'));
  // The build's settings (tsconfig.build.json), for the sample and what it imports only.
  writeFileSync(
    join(build, 'tsconfig.json'),
    JSON.stringify({
      extends: join(ROOT, 'tsconfig.build.json'),
      compilerOptions: {
        outDir: build,
        rootDir: ROOT,
        declaration: false,
        declarationMap: false,
        sourceMap: false,
      },
      include: [join(ROOT, 'sample-app')],
    }),
  );
  const tsc = spawn(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', build], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const { code, output } = await finished(tsc);
  if (code !== 0) {
    rmSync(build, { recursive: true, force: true });
    throw new Error(`tsc failed (${code}):\n${output}`);
  }
  writeFileSync(join(build, '.complete'), '');
  try {
    renameSync(build, dir);
  } catch {
    rmSync(build, { recursive: true, force: true }); // compiled meanwhile by another test file
    if (!existsSync(join(dir, '.complete'))) throw new Error(`could not move the compiled sample to ${dir}`);
  }
}

function finished(
  child: ChildProcess,
): Promise<{ code: number | null; signal: NodeJS.Signals | null; output: string }> {
  let output = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  return new Promise((resolveExit, reject) => {
    child.once('error', reject);
    child.once('close', (code, signal) => resolveExit({ code, signal, output }));
  });
}

/** One instance as the script lists it once the fleet is up. */
export interface FleetInstance {
  readonly port: number;
  readonly pid: number;
  readonly url: string;
}

/** `node scripts/start-cluster.mjs …` as `npm run start:cluster` runs it, with its output collected. */
export class ClusterProcess {
  readonly child: ChildProcess;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; output: string }>;
  /** Everything the script printed so far (its own lines and its instances'). */
  text = '';

  constructor(args: readonly string[], env: Record<string, string | undefined>) {
    const merged: NodeJS.ProcessEnv = { ...process.env };
    for (const [name, value] of Object.entries(env)) {
      if (value === undefined) delete merged[name];
      else merged[name] = value;
    }
    this.child = spawn(process.execPath, [SCRIPT, ...args], {
      cwd: ROOT,
      env: merged,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.exited = finished(this.child);
    this.child.stdout!.on('data', (chunk: string) => (this.text += chunk));
    this.child.stderr!.on('data', (chunk: string) => (this.text += chunk));
  }

  get pid(): number {
    return this.child.pid!;
  }

  /** Resolves with the instances once the script prints that the fleet is up; rejects if it exits first. */
  async ready(): Promise<FleetInstance[]> {
    const up = new Promise<void>((resolveUp) => {
      const check = () => {
        if (/^Fleet ready/m.test(this.text) && /Ctrl-C stops the fleet/.test(this.text)) {
          this.child.stdout!.off('data', check);
          resolveUp();
        }
      };
      this.child.stdout!.on('data', check);
      check();
    });
    const early = this.exited.then(({ code, signal }) => {
      throw new Error(`start-cluster exited before the fleet was up (${code ?? signal}):\n${this.text}`);
    });
    await Promise.race([up, early]);
    early.catch(() => undefined);
    return [...this.text.matchAll(/^ {2}\[(\d+)\] (http:\/\/\S+)\/resilience\/dashboard +\(pid (\d+),/gm)].map((m) => ({
      port: Number(m[1]),
      url: m[2],
      pid: Number(m[3]),
    }));
  }

  /** The redis-server the script started, as it printed it. */
  get redisPid(): number | undefined {
    const match = /started redis-server \(pid (\d+)\)/.exec(this.text);
    return match ? Number(match[1]) : undefined;
  }

  /** Waits for the script to exit by itself. */
  async exit(): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    const { code, signal } = await this.exited;
    return { code, signal };
  }

  /** The command line of its safety-net process (`--reap <pid of the script>`). */
  get reaper(): string {
    return `--reap ${this.pid}`;
  }

  /** Sends `signal` and waits for the script to exit. */
  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill(signal);
    const { code, signal: by } = await this.exited;
    return { code, signal: by };
  }
}

/** Whether the process runs (a zombie, exited but not yet reaped, does not count). */
export function isRunning(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/** The pids of running processes whose command line contains `text`. */
export function processesMentioning(text: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, 'utf8').includes(text) && isRunning(Number(name))) {
        found.push(Number(name));
      }
    } catch {
      // it ended meanwhile
    }
  }
  return found;
}

/** `count` consecutive loopback ports that are free now. */
export async function consecutiveFreePorts(count: number): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const base = 20_000 + Math.floor(Math.random() * 30_000);
    const ports = Array.from({ length: count }, (_, i) => base + i);
    if ((await Promise.all(ports.map(isFree))).every(Boolean)) return base;
  }
  throw new Error(`no ${count} consecutive free ports found`);
}

function isFree(port: number): Promise<boolean> {
  return new Promise((resolveFree) => {
    const server = createServer();
    server.once('error', () => resolveFree(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolveFree(true)));
  });
}

/** Polls `probe` until it returns a value other than undefined, or fails with the last value after `timeout` ms. */
export async function eventually<T>(probe: () => Promise<T | undefined>, what: string, timeout = 10_000): Promise<T> {
  const deadline = Date.now() + timeout;
  let last: Error | undefined;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      last = error instanceof Error ? error : new Error(String(error));
    }
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeout} ms${last ? ` (${last.message})` : ''}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
