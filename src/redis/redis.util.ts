import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ResilienceValidationError, systemTimeProvider, type TimeProvider } from '../core/index.js';
import { REDIS_RULES } from './redis.messages.js';

/** The longest a call waits for Redis unless told otherwise, in ms. @internal */
export const DEFAULT_OPERATION_TIMEOUT = 100;

/**
 * The application's name, from the `name` of the package.json in the working directory (where
 * `npm start`, `node dist/main.js` or a container's `WORKDIR` runs the application), or `undefined` when
 * there is none: the default key prefix, so that applications sharing a Redis do not share circuits.
 *
 * @internal
 */
export function applicationName(directory = process.cwd()): string | undefined {
  try {
    const { name } = JSON.parse(readFileSync(join(directory, 'package.json'), 'utf8')) as { name?: unknown };
    return typeof name === 'string' && name.length > 0 ? name : undefined;
  } catch {
    return undefined;
  }
}

/** The rule reported when no key prefix is given and none can be derived. @internal */
export const KEY_PREFIX_REQUIRED = (): string => REDIS_RULES.keyPrefixRequired(process.cwd());

/**
 * `keyPrefix` as given, else the application's name (`applicationName`); throws a
 * `ResilienceValidationError` naming `path` when there is neither.
 *
 * @internal
 */
export function resolveKeyPrefix(keyPrefix: string | undefined, path = 'keyPrefix'): string {
  const prefix = keyPrefix ?? applicationName();
  if (prefix === undefined) {
    throw new ResilienceValidationError(
      [{ path, value: undefined, rule: KEY_PREFIX_REQUIRED() }],
      REDIS_RULES.invalidOptions,
    );
  }
  return prefix;
}

/** Settles like `promise`, or rejects after `ms` milliseconds (on `time`) without an answer. @internal */
export function withTimeout<T>(promise: Promise<T>, ms: number, time: TimeProvider = systemTimeProvider): Promise<T> {
  if (!(ms > 0) || !Number.isFinite(ms)) return promise;
  return new Promise<T>((resolve, reject) => {
    const timer = time.setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    promise.then(
      (value) => {
        time.clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        time.clearTimeout(timer);
        reject(error);
      },
    );
  });
}

/** A short description of a failure, for one log line. @internal */
export function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** CRC16 (XModem) lookup table, as Redis Cluster uses for key slots. */
const CRC16_TABLE = (() => {
  const table = new Uint16Array(256);
  for (let i = 0; i < 256; i++) {
    let crc = i << 8;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
    table[i] = crc;
  }
  return table;
})();

/**
 * The Redis Cluster slot of a key (0…16383): the CRC16 of its hash tag — what is between the first `{`
 * and the next `}`, when that is not empty — or of the whole key.
 *
 * @internal
 */
export function keySlot(key: string): number {
  let bytes = Buffer.from(key, 'utf8');
  const open = bytes.indexOf(0x7b); // {
  if (open >= 0) {
    const close = bytes.indexOf(0x7d, open + 1); // }
    if (close > open + 1) bytes = bytes.subarray(open + 1, close);
  }
  let crc = 0;
  for (const byte of bytes) crc = ((crc << 8) & 0xffff) ^ CRC16_TABLE[((crc >> 8) ^ byte) & 0xff];
  return crc % 16_384;
}
