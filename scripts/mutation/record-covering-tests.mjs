// Jest setupFilesAfterEnv for the Stryker runs only: in the dry run (no active mutant), records the full
// name of every test of this spec file, so the sequencer can later skip files that hold none of a
// mutant's covering tests.
import { afterAll, afterEach, expect } from '@jest/globals';
import { appendFileSync } from 'node:fs';
import { ACTIVE_MUTANT_ENV, COVERING_TESTS_FILE } from './covering-tests.mjs';

if (process.env[ACTIVE_MUTANT_ENV] === undefined) {
  const names = new Set();
  afterEach(() => {
    const name = expect.getState().currentTestName;
    if (name) names.add(name);
  });
  afterAll(() => {
    const file = expect.getState().testPath;
    appendFileSync(COVERING_TESTS_FILE, `${JSON.stringify({ file, names: [...names] })}\n`);
  });
}
