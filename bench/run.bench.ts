import { replaceReadmeSection } from './readme.util.js';
import os from 'node:os';
import { circuitBreakerCases } from './circuit-breaker.bench.js';
import { coreCases } from './core.bench.js';
import { limitCases } from './limits.bench.js';
import { redisTable } from './redis.bench.js';
import { formatTable, measureGroup, type BenchCase, type BenchResult } from './bench.harness.js';

/**
 * `npm run bench [-- <filter>] [-- --update-readme]`: runs every case whose scenario contains the filter
 * and prints one table; `--update-readme` also writes it into docs/benchmarks.md between the bench markers.
 */
async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const updateReadme = args.includes('--update-readme');
  const filter = args.find((a) => !a.startsWith('--'));
  const all: BenchCase[] = [...coreCases(), ...(await circuitBreakerCases()), ...limitCases()];
  const cases = all.filter((c) => !filter || c.group.includes(filter));
  const groups = [...new Set(cases.map((c) => c.group))];
  const results: BenchResult[] = [];
  for (const group of groups) {
    results.push(...(await measureGroup(cases.filter((c) => c.group === group))));
    process.stderr.write('.');
  }
  process.stderr.write('\n');
  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  const header = `Node ${process.version}, ${os.cpus().length} × ${cpu}, ${os.platform()} ${os.arch()}`;
  const table = formatTable(results, 'bare await fn()');
  console.log(`${header}\n\n${table}`);
  if (updateReadme) replaceReadmeSection('bench', `${header}\n\n${table}`);
  if (!filter || 'redis'.includes(filter)) {
    const redis = await redisTable();
    console.log(`\nRedis store:\n\n${redis}`);
    if (updateReadme) replaceReadmeSection('bench-redis', redis);
  }
}

void main();
