import { ENGINE_RULES } from '../core/internal.js';

/**
 * Every rule text the Redis layer reports about its options (`ValidationIssue.rule`), besides the
 * engine's own, which it reports in the engine's words (`ENGINE_RULES`).
 *
 * @internal
 */
export const REDIS_RULES = {
  ...ENGINE_RULES,
  invalidOptions: 'Invalid Redis store options',
  oneTopology: 'needs exactly one of url, cluster, sentinels (with name) or client',
  clusterNodes: 'must be a non-empty list of "host:port" or { host, port }',
  clusterNode: 'must be "host:port" or { host, port }',
  sentinelNodes: 'must be a non-empty list of { host, port }',
  sentinelNode: 'must be { host, port }',
  sentinelName: 'is required with sentinels (the master group name)',
  nameWithoutSentinels: 'is only used with sentinels',
  ioredisClient: 'must be an ioredis Redis or Cluster client',
  keyPrefixRequired: (cwd: string) =>
    `is required: there is no package.json with a "name" in the working directory (${cwd}) to derive it from`,
} as const;
