import { PerformanceObserver } from 'node:perf_hooks';
import { getHeapSpaceStatistics } from 'node:v8';

/**
 * The measuring half of the benchmark, run inside one fresh process per (scenario, library): warm up,
 * then rounds of sequential `await` loops timed by the process's CPU time, then heap growth over a
 * GC-free window.
 * `run.bench.ts` starts the processes, rotates their order between sweeps and pools the rounds.
 */

/** One way of running a scenario (a library, the bare call or a hand-written reference). */
export interface BenchCase {
  readonly name: string;
  /** Builds the thing measured (outside the timed window) and returns one run of it. */
  readonly setup: () => BenchRun | Promise<BenchRun>;
  /** Cases with the same key measure the same code: measured once per sweep, shown in every scenario. */
  readonly shareKey?: string;
  /** Measures this library's code (as the `nest-resilience` cases do): `--before` runs it from the other build too. */
  readonly ours?: boolean;
}

/** One run of a case; awaited. */
export type BenchRun = () => Promise<unknown>;

export interface BenchScenario {
  readonly id: string;
  readonly title: string;
  /** Calls per run for scenarios that start many calls at once; time is then reported per run (batch). */
  readonly callsPerRun?: number;
  readonly cases: readonly BenchCase[];
}

/** What one process reports for its case. */
export interface CaseSample {
  /** CPU ns per run, one per round. */
  readonly rounds: number[];
  /** Heap bytes per call (per run / callsPerRun), GC-free window; NaN when no such window was found. */
  readonly bytesPerCall: number;
}

const gc = (globalThis as { gc?: () => void }).gc;

async function loop(run: BenchRun, iterations: number): Promise<number> {
  const start = process.hrtime.bigint();
  for (let i = 0; i < iterations; i++) await run();
  return Number(process.hrtime.bigint() - start);
}

/**
 * The CPU time (user + system, in ns) the process spends on `iterations` runs: unlike wall time it does
 * not grow while other processes hold the cores, which on a shared machine is most of the noise.
 */
async function cpuLoop(run: BenchRun, iterations: number): Promise<number> {
  const start = process.cpuUsage();
  for (let i = 0; i < iterations; i++) await run();
  const used = process.cpuUsage(start);
  return (used.user + used.system) * 1_000;
}

export interface MeasureOptions {
  readonly warmupMs: number;
  readonly roundMs: number;
  readonly rounds: number;
}

/** The young generation's capacity and how much of it the OS has backed with memory so far. */
function newSpace(): { size: number; physical: number } {
  const space = getHeapSpaceStatistics().find((s) => s.space_name === 'new_space');
  return { size: space?.space_size ?? 0, physical: space?.physical_space_size ?? 0 };
}

/**
 * Has the OS back the whole young generation (both semi-spaces) before anything is timed, by allocating
 * short-lived garbage until every page of it was touched once. Without it, the first pass of a fresh
 * process through the 64 MB semi-spaces (`--min-semi-space-size=64`) takes a page fault every 4 KB it
 * allocates, and a fault is system CPU time (several µs each on a virtual machine): the rounds then
 * measure mostly how many bytes a call allocates, not what it costs once the process has run a while.
 */
function faultInYoungGeneration(): void {
  const LIMIT = 1 << 30; // a heap whose young generation never fills up stops here
  let sink: number[] | undefined; // kept, so the arrays are not optimised away
  for (let allocated = 0; allocated < LIMIT;) {
    const { size, physical } = newSpace();
    if (size > 0 && physical >= size) break;
    for (let i = 0; i < 4096; i++) sink = new Array<number>(126).fill(i); // ~1 KB each
    allocated += 4096 * 1024;
  }
  void sink;
}

/**
 * Measures one case: the young generation faulted in, a warm-up of `warmupMs` of CPU time, then `rounds`
 * rounds of about `roundMs` of CPU time each.
 */
export async function measureCase(
  run: BenchRun,
  callsPerRun: number,
  { warmupMs, roundMs, rounds }: MeasureOptions,
): Promise<CaseSample> {
  faultInYoungGeneration();
  let runs = 0;
  let elapsed = 0;
  let chunk = 1;
  // Warm-up and rounds count CPU time: on a busy machine a wall-clock warm-up would do less of the work
  // that gets the code optimised, and the first rounds would still measure unoptimised code.
  while (elapsed < warmupMs * 1e6) {
    elapsed += await cpuLoop(run, chunk);
    runs += chunk;
    chunk = Math.min(chunk * 2, 10_000);
  }
  const nsPerRun = elapsed / runs;
  const iterations = Math.max(1, Math.round((roundMs * 1e6) / nsPerRun));
  const samples: number[] = [];
  for (let r = 0; r < rounds; r++) samples.push((await cpuLoop(run, iterations)) / iterations);
  return { rounds: samples, bytesPerCall: (await bytesPerRun(run)) / callsPerRun };
}

/** Heap growth per run with no collection in between: the smallest of five windows that saw no GC. */
async function bytesPerRun(run: BenchRun): Promise<number> {
  if (!gc) return NaN;
  let collections = 0;
  const observer = new PerformanceObserver((list) => {
    collections += list.getEntries().length;
  });
  observer.observe({ entryTypes: ['gc'] });
  const WINDOW_BYTES = 24 * 1024 * 1024;
  try {
    // A probe sizes the windows so that they stay well inside the young generation.
    gc();
    let before = process.memoryUsage().heapUsed;
    await loop(run, 1);
    const probe = Math.max(64, process.memoryUsage().heapUsed - before);
    const iterations = Math.max(1, Math.min(20_000, Math.floor(WINDOW_BYTES / probe)));
    const samples: number[] = [];
    for (let attempt = 0; attempt < 10 && samples.length < 5; attempt++) {
      gc();
      await settleObserver();
      const seen = collections;
      before = process.memoryUsage().heapUsed;
      await loop(run, iterations);
      const grown = process.memoryUsage().heapUsed - before;
      await settleObserver();
      if (collections === seen && grown >= 0) samples.push(grown / iterations);
    }
    // Noise only adds bytes (feedback vectors, code, the odd lazy structure): the smallest window is the truest.
    return samples.length > 0 ? Math.min(...samples) : NaN;
  } finally {
    observer.disconnect();
  }
}

/** GC entries reach the observer a few milliseconds late. */
function settleObserver(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 25));
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}
