// Jest test sequencer for the Stryker runs. For a mutant, Stryker's jest-runner passes the covering tests
// as `testNamePattern`, but Jest still loads every spec file to filter names — with specs importing the
// package barrel that costs seconds per mutant. This sequencer drops the spec files that hold none of the
// covering tests (known from the dry run, see record-covering-tests.mjs). A file it knows nothing about
// is kept, so it can only save time, never hide a killing test.
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
    const keep = (test) => {
      const names = known.get(test.path);
      return names === undefined || names.some((name) => matcher.test(name));
    };
    return Promise.resolve(sorted).then((list) => list.filter(keep));
  }
}
