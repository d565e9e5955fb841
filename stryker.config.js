/**
 * `npm run mutate:core` — Stryker 9.6 (the newest that runs on Node 20) on src/core and src/config (the
 * configuration layer above the engine, tested by the same specs). See CONTRIBUTING.md
 * (Testing) for how it is run and what the last run measured.
 *
 * @type {import('@stryker-mutator/api/core').PartialStrykerOptions}
 */
export default {
  testRunner: 'jest',
  testRunnerNodeArgs: ['--experimental-vm-modules', '--disable-warning=ExperimentalWarning'],
  jest: { configFile: 'jest.stryker.config.js', enableFindRelatedTests: false },
  coverageAnalysis: 'perTest',
  // Static mutants (module-level constants) would need every test for each: left out, listed in the report.
  ignoreStatic: true,
  mutate: ['src/core/**/*.ts', '!src/core/**/index.ts', 'src/config/**/*.ts', '!src/config/**/index.ts'],
  // In-process ESM Jest runs leak memory: restart each runner after 20 mutants.
  maxTestRunnerReuse: 20,
  timeoutMS: 5_000,
  timeoutFactor: 1.5,
  concurrency: 2,
  thresholds: { high: 95, low: 90, break: 90 },
  incremental: true,
  incrementalFile: 'reports/mutation/core/stryker-incremental.json',
  reporters: ['html', 'json', 'clear-text', 'progress'],
  htmlReporter: { fileName: 'reports/mutation/core/mutation.html' },
  jsonReporter: { fileName: 'reports/mutation/core/mutation.json' },
  tempDirName: '.stryker-tmp',
  cleanTempDir: true,
};
