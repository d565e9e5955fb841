// Jest test sequencer for the Stryker runs. For a mutant, Stryker's jest-runner passes the covering tests
// as `testNamePattern`, but Jest still loads every spec file to filter names — with specs importing the
// package barrel that costs seconds per mutant. This sequencer drops the spec files that hold none of the
// covering tests (known from the dry run, see record-covering-tests.mjs). A file it knows nothing about
// is kept, so it can only save time, never hide a killing test. It also puts the files most likely to kill
// the mutant first, as the runner (bail-on-failure.runner.mjs) stops at the first failing file.
import Sequencer from '@jest/test-sequencer';
import { existsSync, readFileSync } from 'node:fs';
import { COVERING_TESTS_FILE } from './covering-tests.mjs';

export default class CoveringTestSequencer extends Sequencer {
  constructor(options) {
    super(options);
    this.pattern = options?.globalConfig?.testNamePattern;
  }

  sort(tests) {
    const sorted = super.sort(tests);
    const pattern = this.pattern;
    if (!pattern || !existsSync(COVERING_TESTS_FILE)) return sorted;
    const known = new Map();
    for (const line of readFileSync(COVERING_TESTS_FILE, 'utf8').split('\n')) {
      if (!line) continue;
      const { file, names } = JSON.parse(line);
      known.set(file, [...(known.get(file) ?? []), ...names]);
    }
    const matcher = new RegExp(pattern, 'i');
    // How many of a file's tests cover the mutant; Infinity for a file the dry run did not see.
    const covering = (test) => {
      const names = known.get(test.path);
      return names === undefined ? Infinity : names.filter((name) => matcher.test(name)).length;
    };
    // The runner stops at the first file with a failing test, so the files with the most covering
    // tests (the likeliest to kill the mutant) go first; unknown files stay, last.
    return Promise.resolve(sorted).then((list) =>
      list
        .map((test) => ({ test, count: covering(test) }))
        .filter(({ count }) => count > 0)
        .sort((a, b) => (a.count === Infinity) - (b.count === Infinity) || b.count - a.count)
        .map(({ test }) => test),
    );
  }
}
