import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { median, type BenchScenario, type CaseSample } from './bench.harness.js';
import { replaceReadmeSection } from './readme.util.js';
import { OBSERVABILITY_TARGETS } from './observability.bench.js';
import { redisTable } from './redis.bench.js';
import { allScenarios } from './scenarios.bench.js';

/**
 * `npm run bench [-- <filter>] [-- --update-readme] [-- --sweeps=N] [-- --json=FILE] [-- --compare=FILE]
 * [-- --before=DIR] [-- --cpu-prof-dir=DIR]`. `--before` names the `dist/bench` folder of another build
 * (say, of the main branch): its nest-resilience cases run in the same sweeps, as "nest-resilience (before)".
 * `--json` also saves every pooled round, so other statistics than the median can be worked out.
 *
 * Every (scenario, library) runs in its own fresh process, so no JIT or GC state leaks from one case into
 * the next. A sweep runs every case once; sweeps rotate the order of scenarios and of the cases within
 * each; the rounds of all sweeps are pooled and their median is reported. Cases that measure the same code
 * (the bare `await fn()`) run once per sweep and are shown in every scenario.
 */
const execFileAsync = promisify(execFile);
const WORKER = fileURLToPath(new URL('./worker.bench.js', import.meta.url));
const NODE_FLAGS = ['--expose-gc', '--min-semi-space-size=64', '--max-semi-space-size=64'];
const MEASURE = { warmupMs: 300, roundMs: 100, rounds: 5 };

interface Unit {
  readonly key: string;
  readonly scenario: BenchScenario;
  readonly caseName: string;
  /** The worker script: this build's, or another build's for `--before`. */
  readonly worker: string;
}

interface Row {
  readonly scenario: BenchScenario;
  readonly caseName: string;
  readonly ns: number;
  readonly spread: number;
  /** Every round of every process, sorted (for `--json`). */
  readonly rounds: readonly number[];
  readonly bytesPerCall: number;
}

/** A ratio the project holds itself to: `case` (default `nest-resilience`) against `vs` (time) or a byte budget. */
interface Target {
  readonly scenario: string;
  readonly case?: string;
  readonly vs?: string;
  readonly max?: number;
  readonly maxBytes?: number;
}

const OURS = 'nest-resilience';
const before = (caseName: string): string => `${caseName} (before)`;
const TARGETS: readonly Target[] = [
  { scenario: 'timeout-aggressive', vs: 'opossum (breaker + timeout)', max: 0.6 },
  { scenario: 'timeout-cooperative', vs: 'opossum (breaker + timeout)', max: 0.6 },
  { scenario: 'retry-breaker-timeout', vs: 'opossum, lean (no percentiles, no snapshots)', max: 0.7 },
  { scenario: 'retry-breaker-timeout', maxBytes: 1_500 },
  { scenario: 'retry-breaker-timeout-concurrent', vs: 'opossum (retry loop + breaker + timeout)', max: 0.7 },
  { scenario: 'retry-two-failures', vs: 'plain retry loop (reference)', max: 1.3 },
  { scenario: 'bulkhead', vs: 'plain FIFO of resolvers (reference)', max: 1.2 },
  { scenario: 'bulkhead', vs: 'cockatiel', max: 0.5 },
  { scenario: 'bulkhead', case: 'nest-resilience (adaptive concurrency)', vs: 'nest-resilience', max: 1.5 },
  { scenario: 'adaptive-throttling', vs: 'fixed concurrency limiter', max: 1.5 },
  ...OBSERVABILITY_TARGETS,
];

function option(args: readonly string[], name: string): string | undefined {
  return args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
}

function rotate<T>(items: readonly T[], by: number): T[] {
  if (items.length === 0) return [];
  const k = by % items.length;
  return [...items.slice(k), ...items.slice(0, k)];
}

async function runUnit(unit: Unit, profileDir: string | undefined): Promise<CaseSample> {
  const flags = profileDir
    ? [
        ...NODE_FLAGS,
        '--cpu-prof',
        `--cpu-prof-dir=${profileDir}`,
        `--cpu-prof-name=${unit.key.replace(/[^\w.-]+/g, '_')}.cpuprofile`,
      ]
    : NODE_FLAGS;
  const { stdout } = await execFileAsync(
    process.execPath,
    [...flags, unit.worker, unit.scenario.id, unit.caseName, JSON.stringify(MEASURE)],
    { maxBuffer: 1024 * 1024 },
  );
  const sample = JSON.parse(stdout.trim().split('\n').pop()!) as { rounds: number[]; bytesPerCall: number | null };
  // JSON has no NaN: a case without a GC-free window reports null.
  return { rounds: sample.rounds, bytesPerCall: sample.bytesPerCall ?? NaN };
}

function formatTime(ns: number): string {
  if (ns < 10_000) return `${ns.toFixed(0)} ns`;
  if (ns < 10_000_000) return `${(ns / 1_000).toFixed(1)} µs`;
  return `${(ns / 1_000_000).toFixed(2)} ms`;
}

function formatTable(rows: readonly Row[], before: Map<string, { ns: number; bytes: number }> | undefined): string {
  const head = ['scenario', 'library', 'time', '±', '× bare', 'bytes/call', 'bytes over bare'];
  if (before) head.push('time vs before', 'bytes vs before');
  const lines = [
    `| ${head.join(' | ')} |`,
    `| --- | --- | ${head
      .slice(2)
      .map(() => '---:')
      .join(' | ')} |`,
  ];
  for (const r of rows) {
    const bare = rows.find((b) => b.scenario === r.scenario && b.caseName.startsWith('bare'));
    const cells = [
      r.scenario.callsPerRun ? `${r.scenario.title} (time per batch)` : r.scenario.title,
      r.caseName,
      formatTime(r.ns),
      `${(r.spread * 100).toFixed(0)} %`,
      bare ? `${(r.ns / bare.ns).toFixed(1)}×` : 'n/a',
      Number.isNaN(r.bytesPerCall) ? 'n/a' : r.bytesPerCall.toFixed(0),
      bare && !Number.isNaN(r.bytesPerCall) ? Math.max(0, r.bytesPerCall - bare.bytesPerCall).toFixed(0) : 'n/a',
    ];
    if (before) {
      const old = r.caseName.endsWith(' (before)') ? undefined : before.get(`${r.scenario.id}/${r.caseName}`);
      cells.push(old ? `${(r.ns / old.ns).toFixed(2)}×` : '', old ? `${(r.bytesPerCall - old.bytes).toFixed(0)}` : '');
    }
    lines.push(`| ${cells.join(' | ')} |`);
  }
  return lines.join('\n');
}

function formatTargets(rows: readonly Row[]): string {
  const lines = ['| scenario | target | measured | met |', '| --- | --- | ---: | :---: |'];
  for (const t of TARGETS) {
    const caseName = t.case ?? OURS;
    const ours = rows.find((r) => r.scenario.id === t.scenario && r.caseName === caseName);
    if (!ours) continue;
    if (t.maxBytes !== undefined) {
      const met = ours.bytesPerCall <= t.maxBytes;
      lines.push(
        `| ${ours.scenario.title} | ≤ ${t.maxBytes.toLocaleString('en-US')} bytes/call | ${ours.bytesPerCall.toFixed(0)} B | ${met ? 'yes' : 'no'} |`,
      );
      continue;
    }
    const peer = rows.find((r) => r.scenario.id === t.scenario && r.caseName === t.vs);
    if (!peer || t.max === undefined) continue;
    const ratio = ours.ns / peer.ns;
    const label = t.case ? `${t.case}: ≤ ${t.max}× ${t.vs}` : `≤ ${t.max}× ${t.vs}`;
    lines.push(`| ${ours.scenario.title} | ${label} | ${ratio.toFixed(2)}× | ${ratio <= t.max ? 'yes' : 'no'} |`);
  }
  return lines.join('\n');
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const updateReadme = args.includes('--update-readme');
  const filter = args.find((a) => !a.startsWith('--'));
  const sweeps = Number(option(args, 'sweeps') ?? 4);
  const jsonFile = option(args, 'json');
  const compareFile = option(args, 'compare');
  const profileDir = option(args, 'cpu-prof-dir');
  const beforeDir = option(args, 'before');

  const scenarios = allScenarios().filter((s) => !filter || s.id.includes(filter) || s.title.includes(filter));
  // The cases the other build has: a scenario or case added since has no "before" row.
  const beforeCases = new Set<string>();
  if (beforeDir) {
    const other = (await import(pathToFileURL(`${beforeDir}/scenarios.bench.js`).href)) as {
      allScenarios(): ReturnType<typeof allScenarios>;
    };
    for (const s of other.allScenarios()) for (const c of s.cases) beforeCases.add(`${s.id}/${c.name}`);
  }
  const hasBefore = (scenarioId: string, c: { name: string; ours?: boolean }): boolean =>
    beforeCases.has(`${scenarioId}/${c.name}`) && (c.name === OURS || c.ours === true);
  const units = new Map<string, Unit>();
  const unitsByScenario = scenarios.map((scenario) => {
    const own: Unit[] = [];
    for (const c of scenario.cases) {
      const key = c.shareKey ?? `${scenario.id}/${c.name}`;
      if (units.has(key)) continue;
      const unit = { key, scenario, caseName: c.name, worker: WORKER };
      units.set(key, unit);
      own.push(unit);
      if (hasBefore(scenario.id, c)) {
        const old = { key: before(key), scenario, caseName: c.name, worker: `${beforeDir}/worker.bench.js` };
        units.set(old.key, old);
        own.push(old);
      }
    }
    return own;
  });

  const samples = new Map<string, CaseSample[]>();
  const started = Date.now();
  let done = 0;
  for (let sweep = 0; sweep < sweeps; sweep++) {
    for (const group of rotate(unitsByScenario, sweep)) {
      for (const unit of rotate(group, sweep)) {
        const sample = await runUnit(unit, profileDir);
        samples.set(unit.key, [...(samples.get(unit.key) ?? []), sample]);
        process.stderr.write(
          `\r${++done}/${units.size * sweeps} processes, ${((Date.now() - started) / 1000).toFixed(0)} s`,
        );
      }
    }
  }
  process.stderr.write('\n');

  const rows: Row[] = [];
  for (const scenario of scenarios) {
    const shown = scenario.cases.flatMap((c) => {
      const key = c.shareKey ?? `${scenario.id}/${c.name}`;
      const row = { key, name: c.name };
      return hasBefore(scenario.id, c) ? [row, { key: before(key), name: before(c.name) }] : [row];
    });
    for (const c of shown) {
      const unitSamples = samples.get(c.key) ?? [];
      const rounds = unitSamples.flatMap((s) => s.rounds).sort((a, b) => a - b);
      const ns = median(rounds);
      const q = (p: number): number => rounds[Math.min(rounds.length - 1, Math.floor(p * rounds.length))];
      const bytes = unitSamples.map((s) => s.bytesPerCall).filter((b) => !Number.isNaN(b));
      rows.push({
        scenario,
        caseName: c.name,
        rounds,
        ns,
        spread: (q(0.75) - q(0.25)) / ns,
        bytesPerCall: bytes.length > 0 ? median(bytes) : NaN,
      });
    }
  }
  if (jsonFile) {
    const json = rows.map((r) => ({
      scenario: r.scenario.id,
      name: r.caseName,
      ns: r.ns,
      bytesPerCall: r.bytesPerCall,
      rounds: r.rounds,
    }));
    writeFileSync(jsonFile, JSON.stringify(json, null, 2));
  }
  const previous = compareFile
    ? new Map(
        (
          JSON.parse(readFileSync(compareFile, 'utf8')) as {
            scenario: string;
            name: string;
            ns: number;
            bytesPerCall: number | null;
          }[]
        ).map((r) => [`${r.scenario}/${r.name}`, { ns: r.ns, bytes: r.bytesPerCall ?? NaN }] as const),
      )
    : beforeDir
      ? new Map(
          rows
            .filter((r) => r.caseName.endsWith(' (before)'))
            .map(
              (r) =>
                [
                  `${r.scenario.id}/${r.caseName.slice(0, -' (before)'.length)}`,
                  { ns: r.ns, bytes: r.bytesPerCall },
                ] as const,
            ),
        )
      : undefined;

  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  const load = os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(', ');
  const header =
    `Node ${process.version}, ${os.cpus().length} × ${cpu}, ${os.platform()} ${os.arch()}; ` +
    `${sweeps} sweeps × ${MEASURE.rounds} rounds per case, one process per case and sweep; load average at the end ${load}`;
  const table = formatTable(
    rows.filter((r) => !r.caseName.endsWith(' (before)')),
    undefined,
  );
  const targets = formatTargets(rows);
  console.log(`${header}\n\n${previous ? formatTable(rows, previous) : table}\n\nTargets:\n\n${targets}`);
  if (updateReadme && !filter) {
    await replaceReadmeSection('bench', `${header}\n\n${table}`);
    await replaceReadmeSection('bench-targets', targets);
  }
  if (!filter || 'redis'.includes(filter)) {
    const redis = await redisTable();
    console.log(`\nRedis store:\n\n${redis}`);
    if (updateReadme) await replaceReadmeSection('bench-redis', redis);
  }
}

void main();
