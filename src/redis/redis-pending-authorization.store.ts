import type { Cluster, Redis } from 'ioredis';
import {
  PendingLoginLimitError,
  type PendingAuthorization,
  type PendingAuthorizationStore,
  type PendingLoginLimits,
} from '../oauth/pending-authorization.store.js';
import { systemTimeProvider, type TimeProvider } from '../core/index.js';
import { resolveKeyPrefix, withTimeout } from './redis.util.js';

/**
 * Saves a pending login: drops the one of the same browser binding, refuses past the per-address and
 * overall caps (sorted sets scored by expiry, pruned on the way), then writes the entry, the binding's
 * pointer and both index entries — every key with an expiry. The caps' scores are on Redis's own clock,
 * the one its keys expire by (so every instance agrees, whatever its clock).
 * KEYS: entry, binding, address index, overall index. ARGV: entry JSON, ttl, per-address cap, overall
 * cap, state, entry-key prefix, address hash ('' = none), address-key prefix.
 */
const SAVE_SCRIPT = `
if redis.replicate_commands then redis.replicate_commands() end
local ttl = tonumber(ARGV[2])
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
local perAddress = tonumber(ARGV[3])
local total = tonumber(ARGV[4])
local address = ARGV[7]
local previous = redis.call('GET', KEYS[2])
if previous then
  local sep = string.find(previous, '|', 1, true)
  local oldState = string.sub(previous, 1, sep - 1)
  local oldAddress = string.sub(previous, sep + 1)
  redis.call('DEL', ARGV[6] .. oldState)
  redis.call('ZREM', KEYS[4], oldState)
  if oldAddress ~= '' then redis.call('ZREM', ARGV[8] .. oldAddress, oldState) end
end
if address ~= '' then
  redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
  if perAddress > 0 and redis.call('ZCARD', KEYS[3]) >= perAddress then
    local first = redis.call('ZRANGE', KEYS[3], 0, 0, 'WITHSCORES')
    return {'address', tostring(tonumber(first[2]) - now)}
  end
end
redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', now)
if total > 0 and redis.call('ZCARD', KEYS[4]) >= total then
  local first = redis.call('ZRANGE', KEYS[4], 0, 0, 'WITHSCORES')
  return {'total', tostring(tonumber(first[2]) - now)}
end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ttl)
redis.call('SET', KEYS[2], ARGV[5] .. '|' .. address, 'PX', ttl)
redis.call('ZADD', KEYS[4], now + ttl, ARGV[5])
if redis.call('PTTL', KEYS[4]) < ttl then redis.call('PEXPIRE', KEYS[4], ttl) end
if address ~= '' then
  redis.call('ZADD', KEYS[3], now + ttl, ARGV[5])
  if redis.call('PTTL', KEYS[3]) < ttl then redis.call('PEXPIRE', KEYS[3], ttl) end
end
return {'ok', '0'}
`;

/**
 * Takes a pending login (once): the entry, its binding's pointer when it still points at it, and its
 * index entries. KEYS: entry, overall index. ARGV: state, binding-key prefix, address-key prefix.
 */
const TAKE_SCRIPT = `
local raw = redis.call('GET', KEYS[1])
if not raw then return false end
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[1])
local ok, entry = pcall(cjson.decode, raw)
if ok and type(entry) == 'table' then
  if type(entry.browserBinding) == 'string' then
    local key = ARGV[2] .. entry.browserBinding
    local pointer = redis.call('GET', key)
    if pointer and string.sub(pointer, 1, #ARGV[1] + 1) == ARGV[1] .. '|' then redis.call('DEL', key) end
  end
  if type(entry.clientAddress) == 'string' then redis.call('ZREM', ARGV[3] .. entry.clientAddress, ARGV[1]) end
end
return raw
`;

/** A pending-login store that cannot answer right now: `retryAfter` ms until it is asked again. @publicApi */
export class PendingStoreUnavailableError extends Error {
  constructor(
    message: string,
    /** Milliseconds until the store is asked again. */
    readonly retryAfter: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'PendingStoreUnavailableError';
  }
}

/** Options of `RedisPendingAuthorizationStore`. @publicApi */
export interface RedisPendingAuthorizationStoreOptions {
  /** Default: the `name` of the package.json in the working directory; without one, required. */
  keyPrefix?: string;
  /** The longest a call waits for Redis, in ms. Default 1000. */
  operationTimeout?: number;
  /** After a failure, Redis is left alone (calls fail at once) for this long, in ms. Default 1000. */
  retryInterval?: number;
  /**
   * The clock of `retryInterval`. Default: the system clock. The caps count on Redis's own clock (the one
   * its keys expire by) and the operation timeout is real time, as the other stores'.
   */
  timeProvider?: TimeProvider;
}

/**
 * Pending authorizations in Redis, so a login started on one instance completes on another. `take` is
 * one script: atomic and single-use across every instance. A browser binding has one pending login at
 * most (a new one replaces it), the caps count per client address and overall, and every key expires.
 * All keys share one hash tag, `<keyPrefix>:oauth:{pending}:…`, so the scripts also run on a cluster.
 * When Redis does not answer within `operationTimeout`, calls fail with `PendingStoreUnavailableError`
 * (and, for `retryInterval`, at once): the login is refused with 503, never kept elsewhere.
 *
 * @publicApi
 */
export class RedisPendingAuthorizationStore implements PendingAuthorizationStore {
  private readonly prefix: string;
  private readonly operationTimeout: number;
  private readonly retryInterval: number;
  private readonly time: TimeProvider;
  private unavailableUntil = 0;

  constructor(
    private readonly client: Redis | Cluster,
    options: RedisPendingAuthorizationStoreOptions = {},
  ) {
    this.prefix = `${resolveKeyPrefix(options.keyPrefix)}:oauth:{pending}:`;
    this.operationTimeout = options.operationTimeout ?? 1_000;
    this.retryInterval = options.retryInterval ?? 1_000;
    this.time = options.timeProvider ?? systemTimeProvider;
  }

  async save(state: string, entry: PendingAuthorization, ttl: number, limits?: PendingLoginLimits): Promise<void> {
    const px = Math.max(1, Math.ceil(ttl));
    const address = entry.clientAddress ?? '';
    const result = (await this.call(() =>
      this.client.eval(
        SAVE_SCRIPT,
        4,
        `${this.prefix}state:${state}`,
        `${this.prefix}binding:${entry.browserBinding}`,
        `${this.prefix}address:${address || '-'}`,
        `${this.prefix}all`,
        JSON.stringify(entry),
        px,
        limits?.perAddress ?? 0,
        limits?.total ?? 0,
        state,
        `${this.prefix}state:`,
        address,
        `${this.prefix}address:`,
      ),
    )) as [string, string];
    if (result[0] === 'address' || result[0] === 'total') {
      throw new PendingLoginLimitError(result[0], Math.max(1, Number(result[1])));
    }
  }

  async take(state: string): Promise<PendingAuthorization | undefined> {
    const raw = (await this.call(() =>
      this.client.eval(
        TAKE_SCRIPT,
        2,
        `${this.prefix}state:${state}`,
        `${this.prefix}all`,
        state,
        `${this.prefix}binding:`,
        `${this.prefix}address:`,
      ),
    )) as string | null;
    return raw === null ? undefined : (JSON.parse(raw) as PendingAuthorization);
  }

  private async call(command: () => Promise<unknown>): Promise<unknown> {
    const now = this.time.now();
    if (now < this.unavailableUntil) {
      throw new PendingStoreUnavailableError('Redis pending-login store unavailable', this.unavailableUntil - now);
    }
    try {
      return await withTimeout(command(), this.operationTimeout);
    } catch (error) {
      this.unavailableUntil = this.time.now() + this.retryInterval;
      throw new PendingStoreUnavailableError('Redis pending-login store unavailable', this.retryInterval, {
        cause: error,
      });
    }
  }
}
