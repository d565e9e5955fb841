// `npm run mutate:changed` — the mutation run CI can afford: Stryker on the engine (with its configuration
// layer) and Redis source files
// that changed since a base commit (default: the first parent of HEAD, i.e. the last commit or merge),
// with the same configurations, thresholds and incremental files as `npm run mutate`.
//
//   npm run mutate:changed                         # files changed by the last commit (or merge)
//   MUTATE_BASE=origin/main npm run mutate:changed # files changed since another base
//   MUTATE_MAX_FILES=4 npm run mutate:changed      # at most 4 files per part (default 2) (the most-changed first)
//
// Exits with Stryker's exit code: non-zero when a part's score is below its break threshold.
import { spawnSync } from 'node:child_process';

const PARTS = [
  { name: 'core', folders: ['src/core/', 'src/config/'], config: 'stryker.config.js' },
  { name: 'redis', folders: ['src/redis/'], config: 'stryker.redis.config.js' },
];

function git(...args) {
  const result = spawnSync('git', args, { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`git ${args.join(' ')}: ${result.stderr.trim()}`);
  return result.stdout.trim();
}

function changedFiles(base) {
  // Lines changed per file, so that with a cap the files that changed most are mutated first.
  const stat = git('diff', '--numstat', '--diff-filter=AMR', base, 'HEAD', '--', 'src/core', 'src/config', 'src/redis');
  return stat
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [added, removed, file] = line.split('\t');
      return { file, lines: Number(added) + Number(removed) };
    })
    .filter(({ file }) => file.endsWith('.ts') && !file.endsWith('/index.ts') && !file.endsWith('.d.ts'))
    .sort((a, b) => b.lines - a.lines);
}

function main() {
  let base = process.env.MUTATE_BASE;
  if (!base) {
    try {
      base = git('rev-parse', '--verify', '--quiet', 'HEAD^1');
    } catch {
      console.log('mutate:changed: HEAD has no parent commit; nothing to compare with.');
      return 0;
    }
  }
  const max = Number(process.env.MUTATE_MAX_FILES ?? 2);
  const changed = changedFiles(base);
  let status = 0;
  for (const part of PARTS) {
    const files = changed.filter(({ file }) => part.folders.some((folder) => file.startsWith(folder)));
    if (files.length === 0) {
      console.log(`mutate:changed: no ${part.folders.join(' or ')} source file changed since ${base.slice(0, 12)}.`);
      continue;
    }
    const chosen = files.slice(0, max).map(({ file }) => file);
    const left = files.slice(max).map(({ file }) => file);
    console.log(`mutate:changed: ${part.name}: ${chosen.join(', ')}`);
    if (left.length > 0) console.log(`mutate:changed: left for the full run (npm run mutate): ${left.join(', ')}`);
    const run = spawnSync(
      'npx',
      [
        'stryker',
        'run',
        part.config,
        '--mutate',
        chosen.join(','),
        '--concurrency',
        process.env.MUTATE_CONCURRENCY ?? '2',
      ],
      { stdio: 'inherit' },
    );
    if (run.status !== 0) status = run.status ?? 1;
  }
  return status;
}

process.exitCode = main();
