import os from 'node:os';
import { coreCases } from './core.bench.js';
import { formatTable, measure, type BenchResult } from './bench.harness.js';

async function main(): Promise<void> {
  const filter = process.argv[2];
  const cases = coreCases().filter((c) => !filter || c.group.includes(filter));
  const results: BenchResult[] = [];
  for (const c of cases) {
    results.push(await measure(c));
    process.stderr.write('.');
  }
  process.stderr.write('\n');
  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  console.log(`Node ${process.version}, ${os.cpus().length} × ${cpu}, ${os.platform()} ${os.arch()}\n`);
  console.log(formatTable(results, 'bare await fn()'));
}

void main();
