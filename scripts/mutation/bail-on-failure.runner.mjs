// Jest test runner for the Stryker runs: Jest's own runner, except that in a serial run (Stryker runs
// each mutant's tests in band) it stops after the first spec file with a failing test. One failing test
// kills the mutant, and Jest's `bail` cannot be set through its programmatic API, so without this every
// covering spec file would still be loaded and run. The files not run report nothing; a run in which
// every test passes runs every file, so a surviving mutant is still tested by all its covering tests.
import TestRunner from 'jest-runner';

export default class BailOnFailureRunner extends TestRunner {
  async runTests(tests, watcher, options) {
    if (!options.serial) return super.runTests(tests, watcher, options);
    let failed = false;
    const unsubscribe = this.on('test-file-success', ([, result]) => {
      if (result.numFailingTests > 0 || result.testExecError) failed = true;
    });
    try {
      for (const test of tests) {
        if (failed) break;
        await super.runTests([test], watcher, options);
      }
    } finally {
      unsubscribe();
    }
  }
}
