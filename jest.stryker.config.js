import base from './jest.config.js';

/**
 * Jest for `npm run mutate:core` (Stryker): the engine's specs only, without the Redis global setup.
 * A short test timeout (4 s; the 10,000-call leak specs give their own), so a mutant that keeps a fake-clock test
 * from ever settling fails that test before Stryker's own timeout would restart the runner.
 * The sequencer drops spec files that hold none of a mutant's covering tests and puts the likeliest killers
 * first; the runner stops at the first spec file with a failing test (one kills the mutant).
 *
 * @type {import('jest').Config}
 */
const { globalSetup, globalTeardown, ...rest } = base;

export default {
  ...rest,
  roots: ['<rootDir>/test/core'],
  testRegex: '\\.spec\\.ts$',
  testTimeout: 4_000,
  testSequencer: '<rootDir>/scripts/mutation/covering-test.sequencer.mjs',
  runner: '<rootDir>/scripts/mutation/bail-on-failure.runner.mjs',
  setupFilesAfterEnv: ['<rootDir>/scripts/mutation/record-covering-tests.mjs'],
};
