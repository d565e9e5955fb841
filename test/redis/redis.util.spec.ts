import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { ResilienceValidationError } from '../../src/core.entry.js';
import { applicationName, keySlot, resolveKeyPrefix } from '../../src/redis/redis.util.js';

/** The slot function ioredis routes cluster commands by (its own dependency, resolved from ioredis). */
const ioredisSlot = createRequire(createRequire(import.meta.url).resolve('ioredis'))('cluster-key-slot') as (
  key: string,
) => number;

/** The CRC16 (XModem) of the whole key, bit by bit: the slot of a key without a usable hash tag. */
function wholeKeySlot(key: string): number {
  let crc = 0;
  for (const byte of Buffer.from(key, 'utf8')) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc % 16_384;
}

describe('keySlot', () => {
  it('gives the slots the Redis Cluster specification gives', () => {
    expect(keySlot('123456789')).toBe(0x31c3 % 16_384); // the CRC16 (XModem) check value
    expect(keySlot('foo')).toBe(12_182);
    expect(keySlot('{user1000}.following')).toBe(keySlot('user1000'));
    // An empty first tag: the whole key is hashed (Redis's keyHashSlot), whatever follows.
    expect(keySlot('foo{}{bar}')).not.toBe(keySlot('bar'));
    expect(keySlot('{}}')).toBe(wholeKeySlot('{}}'));
    expect(keySlot('foo{{bar}}zap')).toBe(keySlot('{bar'));
    expect(keySlot('foo{bar}{zap}')).toBe(keySlot('bar'));
    expect(keySlot('{a')).toBe(wholeKeySlot('{a')); // no closing brace: the whole key
    expect(keySlot('a}b{')).toBe(wholeKeySlot('a}b{')); // a "}" before the "{" closes nothing
    expect(keySlot('user1000')).toBe(wholeKeySlot('user1000'));
  });

  it('agrees with the slot ioredis sends each key to, braces and non-ASCII included (an empty first tag aside)', () => {
    const keys = fc.oneof(
      fc.string(),
      fc.string({ unit: 'grapheme' }),
      fc.array(fc.constantFrom('{', '}', 'a', 'é', '🙂', ':', ''), { maxLength: 12 }).map((parts) => parts.join('')),
    );
    // Where a key's first tag is empty ("{}") cluster-key-slot reads on to a later "}" (for "{}}" it gives
    // slot 0); Redis hashes the whole key, as keySlot does (the example above), and redirects ioredis.
    fc.assert(
      fc.property(
        keys.filter((key) => !key.includes('{}')),
        (key) => keySlot(key) === ioredisSlot(key),
      ),
      { numRuns: 2_000 },
    );
  });
});

describe("the default key prefix, from the application's package.json", () => {
  const made: string[] = [];
  afterAll(() => {
    for (const directory of made) rmSync(directory, { recursive: true, force: true });
  });
  const dir = (packageJson?: string): string => {
    // The real path: process.cwd() reports it so where the temporary folder is a symbolic link.
    const directory = realpathSync(mkdtempSync(join(tmpdir(), 'nest-resilience-app-')));
    made.push(directory);
    if (packageJson !== undefined) writeFileSync(join(directory, 'package.json'), packageJson);
    return directory;
  };

  it('is the package name; no name, an empty or non-string name, no file or broken JSON give none', () => {
    expect(applicationName(dir('{"name":"orders-api"}'))).toBe('orders-api');
    expect(applicationName(dir('{"name":""}'))).toBeUndefined();
    expect(applicationName(dir('{"name":42}'))).toBeUndefined();
    expect(applicationName(dir('{}'))).toBeUndefined();
    expect(applicationName(dir())).toBeUndefined();
    expect(applicationName(dir('{ not json'))).toBeUndefined();
  });

  it('a key prefix given wins; without one and without a name, the start fails naming the path and the directory', () => {
    expect(resolveKeyPrefix('given')).toBe('given');
    expect(resolveKeyPrefix(undefined)).toBe(applicationName()); // this repository's package.json
    const empty = dir();
    const cwd = process.cwd();
    process.chdir(empty);
    try {
      const error = (() => {
        try {
          resolveKeyPrefix(undefined, 'store.redis.keyPrefix');
        } catch (e) {
          return e;
        }
      })() as ResilienceValidationError;
      expect(error).toBeInstanceOf(ResilienceValidationError);
      expect(error.issues).toEqual([
        {
          path: 'store.redis.keyPrefix',
          value: undefined,
          rule: `is required: there is no package.json with a "name" in the working directory (${empty}) to derive it from`,
        },
      ]);
    } finally {
      process.chdir(cwd);
    }
  });
});
