import { Logger } from '@nestjs/common';
import {
  InMemoryCircuitBreakerStateStore,
  ResilienceContext,
  StrategyTelemetry,
  type CircuitBreakerStateStore,
  type RateLimiter,
  type RateLimiterStrategyOptions,
  type TelemetryListener,
  type TimeProvider,
} from '../core/index.js';
import type { PendingAuthorizationStore } from '../oauth/pending-authorization.store.js';
import type { DistributedRateLimit } from '../redis/redis-rate-limiter.js';
import type { RedisStoreConfig, ResilienceModuleOptions } from './resilience-module-options.interface.js';

/** The store the module uses, and what it must close on shutdown. @internal */
export interface ResilienceStoreHandle {
  readonly store: CircuitBreakerStateStore;
  /** Limiters shared through the store, for limits marked `distributed`. */
  readonly distributedLimiter?: (id: string, options: RateLimiterStrategyOptions) => RateLimiter;
  /** Pending OAuth logins on the same connection, so any instance can finish a login. */
  readonly pendingAuthorizationStore?: () => PendingAuthorizationStore;
  close(): Promise<void>;
}

/** DI token of the store handle. @internal */
export const RESILIENCE_STORE_HANDLE = Symbol.for('nest-resilience:store-handle');

/**
 * Turns the `store` option into a store: an instance is used as given; `{ redis: { … } }` loads the Redis
 * store (and ioredis) only then, opening a connection from `url` — which the module closes on shutdown —
 * or using the given `client`, which it leaves open.
 *
 * @internal
 */
export async function createResilienceStore(options: ResilienceModuleOptions): Promise<ResilienceStoreHandle> {
  const option = options.store;
  if (option === undefined) return { store: new InMemoryCircuitBreakerStateStore(), close: () => Promise.resolve() };
  if (!('redis' in option)) return { store: option, close: () => Promise.resolve() };
  return createRedisStore(option.redis, options.timeProvider, options.telemetryListeners);
}

async function createRedisStore(
  config: RedisStoreConfig,
  timeProvider: TimeProvider | undefined,
  listeners: readonly TelemetryListener[] | undefined,
): Promise<ResilienceStoreHandle> {
  const [{ Redis }, { RedisCircuitBreakerStateStore, RedisRateLimiter, RedisPendingAuthorizationStore }] =
    await Promise.all([import('ioredis'), import('../redis/index.js')]);
  const { url, client: given, ...storeOptions } = config;
  if (!given && !url) throw new Error('ResilienceModule: store.redis needs a url or a client.');
  const client = given ?? new Redis(url!, { enableOfflineQueue: false, maxRetriesPerRequest: 0, lazyConnect: true });
  const logger = new Logger('ResilienceModule');
  if (!given) {
    client.on('error', () => undefined); // reported once per outage by the store
    await client.connect().catch((error: unknown) => logger.warn(`Redis is not reachable yet: ${String(error)}`));
  }
  const telemetry = new StrategyTelemetry(
    { pipelineName: undefined, pipelineInstanceName: undefined, strategyName: undefined, strategyType: 'state-store' },
    listeners ?? [],
  );
  const store = new RedisCircuitBreakerStateStore({
    ...storeOptions,
    client,
    timeProvider,
    logger,
    onAvailabilityChange: (available, error) =>
      telemetry.report(
        available ? 'OnStateStoreRestored' : 'OnStateStoreUnavailable',
        available ? 'information' : 'error',
        new ResilienceContext(),
        {
          error,
        },
      ),
  });
  return {
    store,
    pendingAuthorizationStore: () => new RedisPendingAuthorizationStore(client, { keyPrefix: storeOptions.keyPrefix }),
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
        logger,
        timeProvider,
      }),
    close: async () => {
      await store.flush();
      if (!given) await client.quit().catch(() => client.disconnect());
    },
  };
}
