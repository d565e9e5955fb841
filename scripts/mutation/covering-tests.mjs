// Shared by the Stryker Jest setup (records) and the test sequencer (reads): which spec file holds which
// test, by full name, as seen in Stryker's initial (dry) run.
import { join } from 'node:path';

/** One JSON line per spec file: { "file": "/abs/path.spec.ts", "names": ["describe it", ...] }. */
export const COVERING_TESTS_FILE = join(process.cwd(), '.stryker-test-files.jsonl');

/** Set by Stryker while a mutant is active; absent in the dry run. */
export const ACTIVE_MUTANT_ENV = '__STRYKER_ACTIVE_MUTANT__';
