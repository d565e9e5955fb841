// Runs the Jest suite as two Jest processes side by side, each in band (`--detectOpenHandles` runs a
// process's files one after another), on two disjoint groups of test files. One process in band keeps one
// core busy; the suite's long files mostly wait on real servers, browsers and installs, so two groups
// finish in about half the time, and on a machine other work shares they hold two shares of it instead
// of one. Each group starts its own Redis (Jest's global set-up). Arguments are passed to both.
// Lines are prefixed with the group's number; the exit code is non-zero when either group fails.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

/** The first group: the long files that install packages, build the docs site, drive the sample app, a browser or the sign-in. */
const FIRST = ['test/package/', 'test/e2e/', 'test/observability/', 'test/oauth/', 'test/docs-site.spec.ts'];

const jest = ['--experimental-vm-modules', '--disable-warning=ExperimentalWarning', 'node_modules/jest/bin/jest.js'];
const pattern = FIRST.map((dir) => dir.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')).join('|');
const args = process.argv.slice(2);
const groups = [
  ['--testPathPatterns', pattern, '--passWithNoTests'],
  ['--testPathIgnorePatterns', pattern, '/node_modules/', '--passWithNoTests'],
];

const codes = await Promise.all(
  groups.map(
    (selection, index) =>
      new Promise((resolve) => {
        const child = spawn(process.execPath, [...jest, ...selection, ...args], {
          stdio: ['ignore', 'pipe', 'pipe'],
          env: { ...process.env, FORCE_COLOR: process.env.FORCE_COLOR ?? '0' },
        });
        for (const stream of [child.stdout, child.stderr]) {
          createInterface({ input: stream }).on('line', (line) => process.stdout.write(`[${index + 1}] ${line}\n`));
        }
        child.on('close', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
      }),
  ),
);
process.exitCode = codes.some((code) => code !== 0) ? 1 : 0;
