import core from './stryker.config.js';

/**
 * `npm run mutate:redis` — Stryker on src/redis, killed by the Redis specs against a real redis-server.
 * Breaks below 85 %.
 *
 * @type {import('@stryker-mutator/api/core').PartialStrykerOptions}
 */
export default {
  ...core,
  jest: { configFile: 'jest.stryker-redis.config.js', enableFindRelatedTests: false },
  mutate: ['src/redis/**/*.ts', '!src/redis/**/index.ts'],
  timeoutMS: 10_000,
  thresholds: { high: 90, low: 85, break: 85 },
  incrementalFile: 'reports/mutation/redis/stryker-incremental.json',
  htmlReporter: { fileName: 'reports/mutation/redis/mutation.html' },
  jsonReporter: { fileName: 'reports/mutation/redis/mutation.json' },
};
