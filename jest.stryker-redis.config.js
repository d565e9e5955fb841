import base from './jest.stryker.config.js';
import jest from './jest.config.js';

/**
 * Jest for `npm run mutate:redis` (Stryker): the Redis specs, on a redis-server of their own (the
 * project's global setup), so the Lua scripts are exercised for real.
 *
 * @type {import('jest').Config}
 */
export default {
  ...base,
  roots: ['<rootDir>/test/redis'],
  testTimeout: 20_000,
  globalSetup: jest.globalSetup,
  globalTeardown: jest.globalTeardown,
};
