import { measureCase } from './bench.harness.js';
import { allScenarios } from './scenarios.bench.js';

/**
 * One measurement in a fresh process: `node worker.bench.js <scenario id> <case name> <options JSON>`.
 * Prints the case's sample as one JSON line and exits (some peers keep timers that would hold it open).
 */
async function main(): Promise<void> {
  const [scenarioId, caseName, optionsJson] = process.argv.slice(2);
  const scenario = allScenarios().find((s) => s.id === scenarioId);
  const benchCase = scenario?.cases.find((c) => c.name === caseName);
  if (!scenario || !benchCase) throw new Error(`No case "${caseName}" in scenario "${scenarioId}"`);
  const run = await benchCase.setup();
  const sample = await measureCase(run, scenario.callsPerRun ?? 1, JSON.parse(optionsJson));
  process.stdout.write(`${JSON.stringify(sample)}\n`, () => process.exit(0));
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
