import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Test } from '@nestjs/testing';
import type { Redis } from 'ioredis';
import { ResilienceModule, ResilienceValidationError } from '../../src/index.js';
import type { RedisStoreConfig } from '../../src/nest/options/resilience-module-options.interface.js';
import { ready, redisClient } from './redis-test.utils.js';

/**
 * Every rule of `store.redis`, read from the start-up error (path, value, rule). Each case is invalid, so
 * no connection is ever opened; a case that is valid but for one deliberate problem shows that the valid
 * parts raise none.
 */
async function problemsOf(redis: unknown): Promise<[string, unknown, string][]> {
  try {
    const moduleRef = await Test.createTestingModule({
      imports: [ResilienceModule.forRoot({ store: { redis: redis as RedisStoreConfig } })],
    }).compile();
    await moduleRef.close();
  } catch (error) {
    if (!(error instanceof ResilienceValidationError)) throw error;
    return error.issues.map((i) => [i.path.replace(/^store\.redis\.?/, ''), i.value, i.rule]);
  }
  throw new Error('the start did not fail');
}

const url = 'redis://127.0.0.1:1';
const ONE_OF = 'needs exactly one of url, cluster, sentinels (with name) or client';
const CLUSTER_LIST = 'must be a non-empty list of "host:port" or { host, port }';
const CLUSTER_NODE = 'must be "host:port" or { host, port }';
const SENTINEL_LIST = 'must be a non-empty list of { host, port }';
const SENTINEL_NODE = 'must be { host, port }';
const NAME_REQUIRED = 'is required with sentinels (the master group name)';
const NON_EMPTY = 'must be a non-empty string';
/** A problem every case below adds, so that a case whose other parts are valid still fails to start. */
const DELIBERATE: [string, unknown, string] = ['keyPrefix', '', NON_EMPTY];

describe('store.redis connection options', () => {
  let client: Redis;
  beforeAll(async () => {
    client = redisClient();
    await ready(client);
  });
  afterAll(async () => {
    await client.quit();
  });

  it('need exactly one place: none, or several, is one problem saying so', async () => {
    expect(await problemsOf({})).toEqual([['url', undefined, ONE_OF]]);
    expect(await problemsOf({ url, sentinels: [{ host: 'h', port: 1 }], name: 'p' })).toEqual([
      ['url + sentinels', '[several]', ONE_OF],
    ]);
    expect(await problemsOf({ cluster: ['h:1'], client })).toEqual([['cluster + client', '[several]', ONE_OF]]);
  });

  it('a url must be a non-empty string', async () => {
    expect(await problemsOf({ url: 42 })).toEqual([['url', 42, NON_EMPTY]]);
    expect(await problemsOf({ url, keyPrefix: '' })).toEqual([DELIBERATE]);
  });

  it('cluster seeds: a non-empty list of "host:port" strings or addresses', async () => {
    expect(await problemsOf({ cluster: [] })).toEqual([['cluster', [], CLUSTER_LIST]]);
    expect(await problemsOf({ cluster: 'h:7000' })).toEqual([['cluster', 'h:7000', CLUSTER_LIST]]);
    const nodes: [unknown, boolean][] = [
      ['redis-1:7000', true],
      [' redis-2:7001 ', true], // surrounding blanks are ignored
      ['[::1]:7002', true],
      ['10.0.0.1:65535', true],
      [{ host: 'redis-3', port: 7003 }, true],
      [{ host: 'redis-4', port: 65_535 }, true],
      ['no-port', false],
      ['redis:7000x', false],
      ['redis:123456', false],
      ['redis:0', false],
      ['redis:65536', false],
      ['evil\nredis:7000', false],
      [{ host: '', port: 7000 }, false],
      [{ host: 7, port: 7000 }, false],
      [{ host: 'redis', port: 0 }, false],
      [{ host: 'redis', port: 65_536 }, false],
      [{ host: 'redis', port: 70.5 }, false],
      [{ host: 'redis' }, false],
      [null, false],
      [7000, false],
      // Brackets only around a whole IPv6 address.
      [{ host: '[::1]', port: 7004 }, true],
      ['x[::1]:7005', false],
      ['[::1]x:7006', false],
      ['[]:7007', false],
      [{ host: 'redis]', port: 7008 }, false],
    ];
    expect(await problemsOf({ cluster: nodes.map(([n]) => n), keyPrefix: '' })).toEqual([
      ...nodes.flatMap(([node, valid], i) => (valid ? [] : [[`cluster[${i}]`, node, CLUSTER_NODE]])),
      DELIBERATE,
    ]);
  });

  it('Sentinels: a non-empty list of addresses, with the master group name', async () => {
    expect(await problemsOf({ sentinels: [], name: 'p' })).toEqual([['sentinels', [], SENTINEL_LIST]]);
    expect(await problemsOf({ sentinels: 'h:1', name: 'p' })).toEqual([['sentinels', 'h:1', SENTINEL_LIST]]);
    expect(
      await problemsOf({
        sentinels: [
          { host: 's1', port: 26_379 },
          { host: 's2', port: -1 },
          { host: 's3', port: 26_381 },
        ],
        name: 'p',
      }),
    ).toEqual([['sentinels[1]', { host: 's2', port: -1 }, SENTINEL_NODE]]);
    expect(await problemsOf({ sentinels: [{ host: 's', port: 1 }] })).toEqual([['name', undefined, NAME_REQUIRED]]);
    expect(await problemsOf({ sentinels: [{ host: 's', port: 1 }], name: '' })).toEqual([['name', '', NAME_REQUIRED]]);
    expect(await problemsOf({ sentinels: [{ host: 's', port: 1 }], name: 5 })).toEqual([['name', 5, NAME_REQUIRED]]);
    expect(await problemsOf({ sentinels: [{ host: 's', port: 1 }], name: 'p', keyPrefix: '' })).toEqual([DELIBERATE]);
    expect(await problemsOf({ url, name: 'p' })).toEqual([['name', 'p', 'is only used with sentinels']]);
  });

  it('credentials must be strings; a password is never echoed', async () => {
    const problems = await problemsOf({
      url,
      username: '',
      password: 1234,
      sentinelUsername: 7,
      sentinelPassword: { secret: 'hunter2' },
    });
    expect(problems).toEqual([
      ['password', '[redacted]', 'must be a string'],
      ['sentinelPassword', '[redacted]', 'must be a string'],
      ['username', '', NON_EMPTY],
      ['sentinelUsername', 7, NON_EMPTY],
    ]);
    expect(
      await problemsOf({
        sentinels: [{ host: 's', port: 1 }],
        name: 'p',
        username: 'app',
        password: 'pw',
        sentinelUsername: 'watcher',
        sentinelPassword: 'spw',
        keyPrefix: '',
      }),
    ).toEqual([DELIBERATE]);
  });

  it('db: a whole number >= 0; tls: a boolean', async () => {
    expect(await problemsOf({ url, db: -1, tls: 'yes' })).toEqual([
      ['db', -1, 'must be an integer >= 0'],
      ['tls', 'yes', 'must be a boolean'],
    ]);
    expect(await problemsOf({ url, db: 1.5 })).toEqual([['db', 1.5, 'must be an integer >= 0']]);
    expect(await problemsOf({ url, db: 0, tls: true, keyPrefix: '' })).toEqual([DELIBERATE]);
  });

  it('a client must be an ioredis client', async () => {
    expect(await problemsOf({ client: null })).toEqual([
      ['client', '[object]', 'must be an ioredis Redis or Cluster client'],
    ]);
    expect(await problemsOf({ client: { get: () => undefined } })).toEqual([
      ['client', '[object]', 'must be an ioredis Redis or Cluster client'],
    ]);
    expect(await problemsOf({ client, keyPrefix: '' })).toEqual([DELIBERATE]);
  });

  it("the stores' options: one problem each, unknown keys named", async () => {
    expect(await problemsOf(null)).toEqual([['', null, 'must be an object']]);
    expect(await problemsOf('redis://127.0.0.1:6379')).toEqual([['', 'redis://127.0.0.1:6379', 'must be an object']]);
    expect(
      await problemsOf({
        url,
        keyPrefix: 3,
        operationTimeout: 0,
        retryInterval: 0,
        localCacheTtl: -1,
        flushInterval: 0,
        outageMode: 'panic',
        colour: 'blue',
      }),
    ).toEqual([
      ['colour', 'blue', expect.stringContaining('is not a known option')],
      ['keyPrefix', 3, NON_EMPTY],
      ['operationTimeout', 0, 'must be a number >= 1 and <= 2147483647'],
      ['retryInterval', 0, 'must be a number >= 1 and <= 2147483647'],
      ['localCacheTtl', -1, 'must be a number >= 0 and <= 2147483647'],
      ['flushInterval', 0, 'must be a number >= 1 and <= 2147483647'],
      ['outageMode', 'panic', 'must be one of "local", "allow", "reject"'],
    ]);
    expect(
      await problemsOf({
        url,
        keyPrefix: '',
        operationTimeout: 1,
        retryInterval: 1,
        localCacheTtl: 0,
        flushInterval: 1,
        outageMode: 'reject',
      }),
    ).toEqual([DELIBERATE]);
  });
});
