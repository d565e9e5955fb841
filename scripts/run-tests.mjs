// `npm test`: the static checks (lint, format, types, import rules) and the Jest suite, side by side.
//
// The suite runs as several Jest processes (lanes), each in band (`--detectOpenHandles` runs a process's
// files one after another), on disjoint sets of test files. The long files mostly wait on real servers,
// browsers and installs, so lanes finish in a fraction of the time one process takes; on a machine other
// work shares, they also hold several shares of it instead of one. Files are dealt to the lanes longest
// first by their recorded durations (scripts/test-durations.json; a file not recorded yet counts as the
// median), so the lanes end at about the same time. The files under test/package/ stay in one lane: the
// package test's `npm pack` cleans and rebuilds dist/, which the API report reads.
//
// Each lane starts its own Redis (Jest's global set-up). Output lines are prefixed with the lane's name;
// the exit code is non-zero when the checks or any lane fail.
//
//   node scripts/run-tests.mjs [--no-checks] [--lanes N] [--record-durations] [jest options…] [test paths…]
//
// Test paths and patterns choose the files; Jest options (`--detectOpenHandles`, `--testNamePattern=…`: a
// value in the `--name=value` form) go to every lane.
//
// `--record-durations` rewrites scripts/test-durations.json from this run's per-file times.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const durationsFile = join(root, 'scripts', 'test-durations.json');

/** Files that must run one after another in the same lane (they share dist/). */
const TOGETHER = ['test/package/'];
/** The static checks, run one after another in a lane of their own. */
const CHECKS = ['lint', 'format:check', 'typecheck', 'check:imports'];

const argv = process.argv.slice(2);
let checks = true;
let lanes = Number(process.env.TEST_LANES ?? 3);
let record = false;
const jestArgs = [];
for (let i = 0; i < argv.length; i++) {
  if (argv[i] === '--no-checks') checks = false;
  else if (argv[i] === '--lanes') lanes = Number(argv[++i]);
  else if (argv[i] === '--record-durations') record = true;
  else jestArgs.push(argv[i]);
}
if (!Number.isInteger(lanes) || lanes < 1) throw new Error(`--lanes must be a whole number ≥ 1, got ${lanes}`);

const jest = ['--experimental-vm-modules', '--disable-warning=ExperimentalWarning', 'node_modules/jest/bin/jest.js'];

/** The test files Jest would run with these arguments, relative to the repository. */
function listTests() {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...jest, '--listTests', ...jestArgs], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0
        ? resolve(
            out
              .split('\n')
              .filter((line) => line.trim().endsWith('.ts'))
              .map((file) => relative(root, file.trim()))
              .sort(),
          )
        : reject(new Error(`jest --listTests exited with ${code}`)),
    );
  });
}

function readDurations() {
  try {
    return JSON.parse(readFileSync(durationsFile, 'utf8'));
  } catch {
    return {};
  }
}

/** Jobs (a file, or files that go together) dealt longest first to the lane that ends first. */
function dealLanes(files, durations, count) {
  const known = files
    .map((file) => durations[file])
    .filter((d) => typeof d === 'number')
    .sort((a, b) => a - b);
  const median = known.length ? known[Math.floor(known.length / 2)] : 1;
  const jobs = new Map();
  for (const file of files) {
    const together = TOGETHER.find((prefix) => file.startsWith(prefix));
    const key = together ?? file;
    const job = jobs.get(key) ?? { files: [], seconds: 0 };
    job.files.push(file);
    job.seconds += durations[file] ?? median;
    jobs.set(key, job);
  }
  const result = Array.from({ length: count }, () => ({ files: [], seconds: 0 }));
  for (const job of [...jobs.values()].sort((a, b) => b.seconds - a.seconds)) {
    const lane = result.reduce((best, lane) => (lane.seconds < best.seconds ? lane : best));
    lane.files.push(...job.files);
    lane.seconds += job.seconds;
  }
  return result.filter((lane) => lane.files.length > 0);
}

function prefixed(child, name) {
  for (const stream of [child.stdout, child.stderr]) {
    createInterface({ input: stream }).on('line', (line) => process.stdout.write(`[${name}] ${line}\n`));
  }
}

function runLane(name, command, args, options = {}) {
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn(command, args, {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, FORCE_COLOR: process.env.FORCE_COLOR ?? '0' },
      ...options,
    });
    prefixed(child, name);
    child.on('close', (code, signal) => {
      const seconds = Math.round((Date.now() - started) / 1000);
      process.stdout.write(`[${name}] finished in ${seconds} s${code === 0 ? '' : ` (exit ${code ?? signal})`}\n`);
      resolve(code ?? (signal ? 1 : 0));
    });
  });
}

async function runChecks() {
  for (const script of CHECKS) {
    const code = await runLane('checks', 'npm', ['run', '--silent', script]);
    if (code !== 0) return code;
  }
  return 0;
}

const files = await listTests();
const durations = readDurations();
const dealt = dealLanes(files, durations, lanes);
const reports = mkdtempSync(join(tmpdir(), 'nest-resilience-lanes-'));
for (const [index, lane] of dealt.entries()) {
  process.stdout.write(`[${index + 1}] ${lane.files.length} files, ~${Math.round(lane.seconds)} s recorded\n`);
}

// Test path patterns chose the files above; a lane gets the options only, and its files by path.
const laneArgs = jestArgs.filter((arg) => arg.startsWith('-'));
const runs = dealt.map((lane, index) => {
  const report = join(reports, `lane-${index + 1}.json`);
  const args = [
    ...jest,
    ...laneArgs,
    ...(record ? ['--json', '--outputFile', report] : []),
    '--runTestsByPath',
    ...lane.files,
  ];
  return runLane(String(index + 1), process.execPath, args);
});
if (checks) runs.push(runChecks());
const codes = await Promise.all(runs);

if (record) {
  const next = { ...durations };
  for (const [index] of dealt.entries()) {
    try {
      const { testResults } = JSON.parse(readFileSync(join(reports, `lane-${index + 1}.json`), 'utf8'));
      for (const result of testResults) {
        const seconds = (result.endTime - result.startTime) / 1000;
        next[relative(root, result.name)] = Math.round(seconds * 10) / 10;
      }
    } catch {
      // a lane that wrote no report keeps its files' old durations
    }
  }
  const sorted = Object.fromEntries(
    Object.entries(next)
      // A run of some files keeps the others' durations; a file that no longer exists leaves.
      .filter(([file]) => existsSync(join(root, file)))
      .sort(([a], [b]) => a.localeCompare(b)),
  );
  writeFileSync(durationsFile, `${JSON.stringify(sorted, null, 2)}\n`);
  process.stdout.write(`recorded ${Object.keys(sorted).length} durations in ${relative(root, durationsFile)}\n`);
}
rmSync(reports, { recursive: true, force: true });
process.exitCode = codes.some((code) => code !== 0) ? 1 : 0;
