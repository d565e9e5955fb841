import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { setMaxListeners } from 'node:events';
import { resolve } from 'node:path';
import { OVERLOAD_SCENARIO } from './overload.defaults.js';
import { pipelinePolicy, POLICIES } from './overload.policies.js';
import { replaceBetweenMarkers, resultTable, timelineChart } from './overload.report.js';
import { runSeeds, type PolicyResult } from './overload.scenario.js';
import { peerPolicies } from './peer.policies.js';

/**
 * `npm run simulate`: runs every policy through the overload scenario on simulated time and writes the
 * table into docs/overload.md and the chart into docs/images/overload.svg (run from the package root).
 */
/** Runs per policy, with consecutive seeds. */
const SEEDS = 3;

async function main(): Promise<void> {
  const root = process.cwd();
  // cockatiel adds an abort listener per wrapped policy to one signal; more than 10 is expected here.
  setMaxListeners(0);
  // Nobody reads the stacks of the simulation's many errors; capturing them would take a third of the run.
  Error.stackTraceLimit = 0;
  const policies = [...POLICIES.map(pipelinePolicy), ...(await peerPolicies())];
  const results: PolicyResult[] = [];
  for (const policy of policies) {
    const started = performance.now();
    const result = await runSeeds(policy, OVERLOAD_SCENARIO, SEEDS);
    results.push(result);
    const recovery = result.recovery === undefined ? 'never' : `${result.recovery} ms`;
    console.log(
      `${policy.name}: goodput ${result.goodput.toFixed(1)} req/s (${Math.round(result.goodputShare * 100)} %), ` +
        `amplification ${result.amplification.toFixed(2)}×, p99 ${Math.round(result.p99)} ms, recovery ${recovery} ` +
        `[${Math.round(performance.now() - started)} ms of real time]`,
    );
  }

  const page = resolve(root, 'docs/overload.md');
  writeFileSync(page, replaceBetweenMarkers(readFileSync(page, 'utf8'), resultTable(results, OVERLOAD_SCENARIO)));
  mkdirSync(resolve(root, 'docs/images'), { recursive: true });
  writeFileSync(resolve(root, 'docs/images/overload.svg'), timelineChart(results, OVERLOAD_SCENARIO));
  console.log('wrote docs/overload.md and docs/images/overload.svg');
}

await main();
