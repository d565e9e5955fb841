import {
  OptionsValidator,
  type RateLimiter,
  type RateLimiterStrategyOptions,
  type TimeProvider,
} from '../core/index.js';
import type { PendingAuthorizationStore } from '../oauth/pending-authorization.store.js';
import { RedisAdaptiveThrottlingStore } from './redis-adaptive-throttling.store.js';
import type { StoreLogger } from './redis-availability.js';
import {
  RedisCircuitBreakerStateStore,
  type RedisCircuitBreakerStateStoreOptions,
} from './redis-circuit-breaker-state.store.js';
import {
  openRedisConnection,
  validateRedisConnectionOptions,
  type RedisConnectionOptions,
} from './redis-connection.factory.js';
import { RedisFleetChannel } from './redis-fleet.channel.js';
import { RedisPendingAuthorizationStore } from './redis-pending-authorization.store.js';
import { RedisRateLimiter, type DistributedRateLimit } from './redis-rate-limiter.js';
import { REDIS_RULES } from './redis.messages.js';
import { applicationName, DEFAULT_OPERATION_TIMEOUT, KEY_PREFIX_REQUIRED } from './redis.util.js';

/**
 * Everything shared through one Redis: where it is, and how the stores behave.
 *
 * @publicApi
 */
export type RedisStoresOptions = RedisConnectionOptions &
  Omit<RedisCircuitBreakerStateStoreOptions, 'client' | 'logger' | 'onAvailabilityChange' | 'timeProvider'>;

/** The Redis-backed stores of an application, on one connection. @internal */
export interface RedisStores {
  readonly store: RedisCircuitBreakerStateStore;
  readonly distributedLimiter: (id: string, options: RateLimiterStrategyOptions) => RateLimiter;
  readonly pendingAuthorizationStore: () => PendingAuthorizationStore;
  /** The windows of adaptive throttling sections with `fleet`, on the same connection. */
  readonly adaptiveThrottlingStore: RedisAdaptiveThrottlingStore;
  /** The fleet's stats on the same connection (made on first use). */
  readonly fleetChannel: () => RedisFleetChannel;
  /** Sends waiting successes, then closes the connection if it was opened here. */
  close(): Promise<void>;
}

/** The options that say how to connect; the others are the stores'. */
const CONNECTION_KEYS = [
  'url',
  'cluster',
  'sentinels',
  'name',
  'username',
  'password',
  'sentinelUsername',
  'sentinelPassword',
  'db',
  'tls',
  'client',
] as const satisfies readonly (keyof RedisConnectionOptions)[];

/** The options of `store: { redis }`. @internal */
export const STORE_KEYS = [
  ...CONNECTION_KEYS,
  'keyPrefix',
  'operationTimeout',
  'retryInterval',
  'outageMode',
  'localCacheTtl',
  'flushInterval',
] as const;

/** Every problem of the options at once, as a `ResilienceValidationError`. @internal */
export function validateRedisStoresOptions(options: RedisStoresOptions, path = 'store.redis'): void {
  const v = new OptionsValidator(path);
  if (options === null || typeof options !== 'object') {
    v.add('', options, REDIS_RULES.object);
    v.throwIfInvalid();
  }
  v.knownKeys(options, STORE_KEYS);
  validateRedisConnectionOptions(v, options);
  v.string('keyPrefix', options.keyPrefix);
  if (options.keyPrefix === undefined && applicationName() === undefined) {
    v.add('keyPrefix', undefined, KEY_PREFIX_REQUIRED());
  }
  v.duration('operationTimeout', options.operationTimeout, { min: 1 });
  v.duration('retryInterval', options.retryInterval, { min: 1 });
  v.duration('localCacheTtl', options.localCacheTtl);
  v.duration('flushInterval', options.flushInterval, { min: 1 });
  v.oneOf('outageMode', options.outageMode, ['local', 'allow', 'reject']);
  v.throwIfInvalid(REDIS_RULES.invalidOptions);
}

/**
 * Opens the connection (`url`, `cluster`, `sentinels`, or your `client`) and builds the circuit store,
 * the distributed rate limiters, the adaptive throttling store and the pending-login store on it. A connection that cannot be made yet
 * is logged once; the stores answer from their outage mode until Redis is there.
 *
 * @internal
 */
export async function createRedisStores(
  options: RedisStoresOptions,
  context: {
    readonly logger: StoreLogger;
    readonly timeProvider?: TimeProvider;
    readonly onAvailabilityChange?: (available: boolean, error?: unknown) => void;
  },
): Promise<RedisStores> {
  validateRedisStoresOptions(options);
  const connectionOptions: RedisConnectionOptions = {};
  // One prefix for every store, read once: the application's name unless given.
  const storeOptions: Partial<RedisStoresOptions> = { ...options, keyPrefix: options.keyPrefix ?? applicationName() };
  for (const key of CONNECTION_KEYS) {
    (connectionOptions as Record<string, unknown>)[key] = options[key];
    delete storeOptions[key];
  }
  const connection = openRedisConnection(connectionOptions);
  const failed = await connection.connect();
  if (failed !== undefined) {
    context.logger.warn(
      `Redis (${connection.topology}) is not reachable yet; the stores use their outage mode until it is.`,
    );
  }
  const client = connection.client;
  const store = new RedisCircuitBreakerStateStore({
    ...storeOptions,
    client,
    timeProvider: context.timeProvider,
    logger: context.logger,
    onAvailabilityChange: context.onAvailabilityChange,
  });
  let fleet: RedisFleetChannel | undefined;
  return {
    store,
    adaptiveThrottlingStore: new RedisAdaptiveThrottlingStore({
      client,
      keyPrefix: storeOptions.keyPrefix,
      operationTimeout: storeOptions.operationTimeout,
      retryInterval: storeOptions.retryInterval,
      logger: context.logger,
      timeProvider: context.timeProvider,
    }),
    fleetChannel: () =>
      (fleet ??= new RedisFleetChannel(client, {
        keyPrefix: storeOptions.keyPrefix,
        operationTimeout: storeOptions.operationTimeout,
        retryInterval: storeOptions.retryInterval,
        logger: context.logger,
        timeProvider: context.timeProvider,
      })),
    pendingAuthorizationStore: () =>
      new RedisPendingAuthorizationStore(client, {
        keyPrefix: storeOptions.keyPrefix,
        timeProvider: context.timeProvider,
      }),
    distributedLimiter: (id, limitOptions) =>
      new RedisRateLimiter({
        client,
        name: id,
        keyPrefix: storeOptions.keyPrefix,
        limit: limitOptions as DistributedRateLimit,
        partitionKey: limitOptions.partitionKey,
        operationTimeout: storeOptions.operationTimeout,
        retryInterval: storeOptions.retryInterval,
        outageMode: storeOptions.outageMode,
        logger: context.logger,
        timeProvider: context.timeProvider,
      }),
    close: async () => {
      await store.flush();
      await connection.close(storeOptions.operationTimeout ?? DEFAULT_OPERATION_TIMEOUT);
    },
  };
}
