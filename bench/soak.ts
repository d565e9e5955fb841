import { performance } from 'node:perf_hooks';
import os from 'node:os';
import { ResiliencePipelineBuilder, type ResilienceContext, type ResiliencePipeline } from '../src/index.js';

/**
 * `npm run soak [-- --calls N] [-- --concurrency C] [-- --only name]`: drives N calls (default
 * 1,000,000) through each strategy and the composed pipeline on the real clock, with failures, timeouts,
 * cancellations and circuit-breaker cycles mixed in, C calls in flight at once (the event loop turns
 * between them). After each scenario it checks that
 *
 * - the heap (after GC) and the active handle count are back at their baseline, within ±5 %;
 * - p99 latency is flat: the last tenth's p99 is at most `--p99-factor` (default 1.5) × the first
 *   tenth's p99 + 0.5 ms (first tenth measured after a warm-up).
 *
 * Prints one line of figures per scenario and exits 1 on any violation. Needs `node --expose-gc`.
 */

interface Options {
  calls: number;
  concurrency: number;
  p99Factor: number;
  only: string | undefined;
}

function parseArgs(argv: readonly string[]): Options {
  const value = (name: string): string | undefined => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const calls = Number(value('calls') ?? 1_000_000);
  const concurrency = Number(value('concurrency') ?? 64);
  const p99Factor = Number(value('p99-factor') ?? 1.5);
  if (!(calls >= 1_000) || !(concurrency >= 1) || !(p99Factor >= 1)) {
    throw new Error('usage: soak [--calls N>=1000] [--concurrency C>=1] [--p99-factor F>=1] [--only name]');
  }
  return { calls, concurrency, p99Factor, only: value('only') };
}

const gc = (globalThis as { gc?: () => void }).gc;

/** What one call of the mix does, chosen by its index so every run is the same. */
type Kind = 'ok' | 'fail' | 'slow' | 'cancel' | 'burst';

function kindOf(i: number): Kind {
  // A burst of failures every 20,000 calls opens breakers; the breaks (10 ms) end and probes close them.
  if (i % 20_000 < 40) return 'burst';
  if (i % 10 === 3) return 'fail';
  if (i % 211 === 7) return 'slow';
  if (i % 97 === 11) return 'cancel';
  return 'ok';
}

const failure = new Error('soak failure');

/** The callback: resolves on a microtask, fails, or waits (aborted by the signal) for `slow`. */
function callback(kind: Kind): (context: ResilienceContext) => Promise<number> {
  switch (kind) {
    case 'ok':
      return () => Promise.resolve(1);
    case 'fail':
    case 'burst':
      return () => Promise.reject(failure);
    case 'slow':
    case 'cancel':
      return ({ signal }) =>
        new Promise<number>((resolve, reject) => {
          const timer = setTimeout(() => {
            signal.removeEventListener('abort', onAbort);
            resolve(2);
          }, 15);
          const onAbort = (): void => {
            clearTimeout(timer);
            reject(signal.reason);
          };
          signal.addEventListener('abort', onAbort, { once: true });
        });
  }
}

interface Scenario {
  name: string;
  pipeline: ResiliencePipeline<number>;
}

function scenarios(): Scenario[] {
  const b = () => new ResiliencePipelineBuilder<number>();
  const breaker = { kind: 'consecutive' as const, failureThreshold: 20, breakDuration: 10 };
  return [
    { name: 'retry', pipeline: b().addRetry({ maxRetryAttempts: 2, delay: 0 }).build() },
    { name: 'timeout', pipeline: b().addTimeout(5).build() },
    { name: 'timeout-aggressive', pipeline: b().addTimeout({ timeout: 5, mode: 'aggressive' }).build() },
    { name: 'fallback', pipeline: b().addFallback({ fallbackValue: 0 }).build() },
    { name: 'circuit-breaker', pipeline: b().addCircuitBreaker(breaker).build() },
    {
      name: 'circuit-breaker-time-window',
      pipeline: b()
        .addCircuitBreaker({ samplingDuration: 50, minimumThroughput: 20, failureRatio: 0.5, breakDuration: 10 })
        .build(),
    },
    {
      name: 'rate-limiter',
      pipeline: b()
        .addRateLimiter({ kind: 'token-bucket', tokenLimit: 5_000, tokensPerPeriod: 5_000, replenishmentPeriod: 10 })
        .build(),
    },
    { name: 'concurrency-limiter', pipeline: b().addConcurrencyLimiter(48, 8).build() },
    { name: 'hedging', pipeline: b().addHedging({ maxHedgedAttempts: 1, delay: 2 }).build() },
    {
      name: 'composed',
      pipeline: b()
        .addFallback({ fallbackValue: 0, shouldHandle: ({ outcome }) => !outcome.ok && outcome.error === failure })
        .addTimeout(50)
        .addConcurrencyLimiter(48, 16)
        .addRetry({ maxRetryAttempts: 1, delay: 0 })
        .addCircuitBreaker(breaker)
        .addTimeout(5)
        .build(),
    },
  ];
}

interface Tally {
  ok: number;
  failed: number;
}

/** Runs calls [from, to) with `concurrency` in flight; records latencies of [sampleFrom, sampleTo). */
async function drive(
  pipeline: ResiliencePipeline<number>,
  from: number,
  to: number,
  concurrency: number,
  tally: Tally,
  samples?: { first: Float64Array; last: Float64Array; tenth: number },
): Promise<void> {
  let next = from;
  const worker = async (): Promise<void> => {
    while (next < to) {
      const i = next++;
      const kind = kindOf(i);
      let controller: AbortController | undefined;
      if (kind === 'cancel') {
        controller = new AbortController();
        const c = controller;
        setImmediate(() => c.abort(new Error('caller left')));
      }
      const started = performance.now();
      try {
        await pipeline.execute(callback(kind), controller ? { signal: controller.signal } : undefined);
        tally.ok++;
      } catch {
        tally.failed++;
      }
      if (samples) {
        const elapsed = performance.now() - started;
        const offset = i - from;
        if (offset < samples.tenth) samples.first[offset] = elapsed;
        else if (offset >= to - from - samples.tenth) samples.last[offset - (to - from - samples.tenth)] = elapsed;
      }
      // Let timers and I/O run now and then, as a server's event loop would.
      if ((i & 1023) === 0) await new Promise((resolve) => setImmediate(resolve));
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

function percentile(values: Float64Array, p: number): number {
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

async function settleHeap(): Promise<number> {
  // Let pending timers (breaks, limiter periods, late aborted callbacks) run out, then collect.
  await new Promise((resolve) => setTimeout(resolve, 60));
  for (let i = 0; i < 6; i++) {
    gc!();
    await new Promise((resolve) => setImmediate(resolve));
  }
  return process.memoryUsage().heapUsed;
}

function handles(): number {
  return process.getActiveResourcesInfo().filter((r) => r !== 'TTYWrap').length;
}

interface Figures {
  name: string;
  calls: number;
  seconds: number;
  ok: number;
  failed: number;
  p50First: number;
  p99First: number;
  p99Last: number;
  heapBase: number;
  heapAfter: number;
  handlesBase: number;
  handlesAfter: number;
  violations: string[];
}

async function soak(scenario: Scenario, options: Options): Promise<Figures> {
  const tenth = Math.floor(options.calls / 10);
  const samples = { first: new Float64Array(tenth), last: new Float64Array(tenth), tenth };
  const tally: Tally = { ok: 0, failed: 0 };
  // Warm-up: JIT, lazily created limiters and timers; then the baseline.
  await drive(scenario.pipeline, 0, Math.min(20_000, tenth), options.concurrency, { ok: 0, failed: 0 });
  const heapBase = await settleHeap();
  const handlesBase = handles();
  const started = performance.now();
  await drive(scenario.pipeline, 0, options.calls, options.concurrency, tally, samples);
  const seconds = (performance.now() - started) / 1_000;
  const heapAfter = await settleHeap();
  const handlesAfter = handles();

  const p99First = percentile(samples.first, 99);
  const p99Last = percentile(samples.last, 99);
  const violations: string[] = [];
  const heapDrift = (heapAfter - heapBase) / heapBase;
  if (Math.abs(heapDrift) > 0.05) violations.push(`heap ${(heapDrift * 100).toFixed(1)} % from its baseline`);
  if (Math.abs(handlesAfter - handlesBase) > Math.floor(handlesBase * 0.05)) {
    violations.push(`handles ${handlesBase} → ${handlesAfter}`);
  }
  if (p99Last > p99First * options.p99Factor + 0.5) {
    violations.push(`p99 grew from ${p99First.toFixed(3)} ms to ${p99Last.toFixed(3)} ms`);
  }
  if (tally.ok + tally.failed !== options.calls) violations.push(`${tally.ok + tally.failed} calls settled`);
  return {
    name: scenario.name,
    calls: options.calls,
    seconds,
    ok: tally.ok,
    failed: tally.failed,
    p50First: percentile(samples.first, 50),
    p99First,
    p99Last,
    heapBase,
    heapAfter,
    handlesBase,
    handlesAfter,
    violations,
  };
}

const mb = (bytes: number): string => (bytes / 1_048_576).toFixed(2);

async function main(): Promise<void> {
  if (!gc) throw new Error('run with node --expose-gc (npm run soak does)');
  const options = parseArgs(process.argv.slice(2));
  const selected = scenarios().filter((s) => !options.only || s.name === options.only);
  console.log(
    `soak: ${options.calls.toLocaleString('en')} calls per scenario, ${options.concurrency} in flight; ` +
      `Node ${process.version}, ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'CPU'}, load ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
  );
  console.log(
    '| scenario | calls/s | ok / failed | p50 first ms | p99 first ms | p99 last ms | heap MB base → after | handles | verdict |',
  );
  console.log('| --- | --: | --: | --: | --: | --: | --: | --: | --- |');
  let failedScenarios = 0;
  for (const scenario of selected) {
    const f = await soak(scenario, options);
    if (f.violations.length > 0) failedScenarios++;
    console.log(
      `| ${f.name} | ${Math.round(f.calls / f.seconds).toLocaleString('en')} | ${f.ok} / ${f.failed} | ` +
        `${f.p50First.toFixed(3)} | ${f.p99First.toFixed(3)} | ${f.p99Last.toFixed(3)} | ` +
        `${mb(f.heapBase)} → ${mb(f.heapAfter)} | ${f.handlesBase} → ${f.handlesAfter} | ` +
        `${f.violations.length === 0 ? 'ok' : f.violations.join('; ')} |`,
    );
    await scenario.pipeline.dispose();
  }
  if (failedScenarios > 0) {
    console.error(`soak: ${failedScenarios} scenario(s) violated a limit`);
    process.exitCode = 1;
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
