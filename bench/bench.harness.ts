/**
 * A small, dependency-free harness: each case is run in sequential `await` loops; the median of several
 * rounds gives ns per call, and heap growth over a GC-free window gives bytes per call.
 */

export interface BenchCase {
  readonly group: string;
  readonly name: string;
  /** One call of the thing measured; awaited. */
  readonly run: () => Promise<unknown>;
  /** Calls per round (default 200,000). */
  readonly iterations?: number;
}

export interface BenchResult {
  readonly group: string;
  readonly name: string;
  readonly nsPerCall: number;
  readonly bytesPerCall: number;
}

const gc = (globalThis as { gc?: () => void }).gc;

async function loop(run: () => Promise<unknown>, iterations: number): Promise<number> {
  const start = process.hrtime.bigint();
  for (let i = 0; i < iterations; i++) await run();
  return Number(process.hrtime.bigint() - start) / iterations;
}

/**
 * Measures the cases of one scenario together: rounds are interleaved (bare, ours, theirs, bare, …) so
 * that drift in the machine's speed affects every case alike, and each case's median round is kept.
 */
export async function measureGroup(cases: readonly BenchCase[], rounds = 9): Promise<BenchResult[]> {
  for (const c of cases) await loop(c.run, Math.min(c.iterations ?? 200_000, 50_000)); // warm up the JIT
  const samples = cases.map(() => [] as number[]);
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < cases.length; i++) samples[i].push(await loop(cases[i].run, cases[i].iterations ?? 200_000));
  }
  const results: BenchResult[] = [];
  for (const [i, c] of cases.entries()) {
    results.push({
      group: c.group,
      name: c.name,
      nsPerCall: median(samples[i]),
      bytesPerCall: await bytesPerCallAsync(c),
    });
  }
  return results;
}

async function bytesPerCallAsync(c: BenchCase): Promise<number> {
  const iterations = Math.min(c.iterations ?? 200_000, 20_000);
  const byteSamples: number[] = [];
  for (let r = 0; r < 3; r++) {
    gc?.();
    const before = process.memoryUsage().heapUsed;
    for (let i = 0; i < iterations; i++) await c.run();
    byteSamples.push(Math.max(0, process.memoryUsage().heapUsed - before) / iterations);
  }
  return median(byteSamples);
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[sorted.length >> 1];
}

export function formatTable(results: readonly BenchResult[], baselineName: string): string {
  const lines = [
    '| scenario | library | ns/call | × bare | bytes/call | bytes over bare |',
    '| --- | --- | ---: | ---: | ---: | ---: |',
  ];
  const byGroup = new Map<string, BenchResult[]>();
  for (const r of results) byGroup.set(r.group, [...(byGroup.get(r.group) ?? []), r]);
  for (const [group, rows] of byGroup) {
    const bare = rows.find((r) => r.name === baselineName) ?? results.find((r) => r.name === baselineName);
    for (const r of rows) {
      const ratio = bare ? `${(r.nsPerCall / bare.nsPerCall).toFixed(1)}×` : 'n/a';
      const extra = bare ? Math.max(0, r.bytesPerCall - bare.bytesPerCall).toFixed(0) : 'n/a';
      lines.push(
        `| ${group} | ${r.name} | ${r.nsPerCall.toFixed(0)} | ${ratio} | ${r.bytesPerCall.toFixed(0)} | ${extra} |`,
      );
    }
  }
  return lines.join('\n');
}
