import { Logger } from '@nestjs/common';
import {
  InMemoryCircuitBreakerStateStore,
  ResilienceContext,
  StrategyTelemetry,
  type AdaptiveThrottlingStore,
  type CircuitBreakerStateStore,
  type RateLimiter,
  type RateLimiterStrategyOptions,
  type TelemetryListener,
  type TimeProvider,
} from '../../core/index.js';
import type { PendingAuthorizationStore } from '../../oauth/pending-authorization.store.js';
import type { RedisStoreConfig, ResilienceModuleOptions } from '../options/resilience-module-options.interface.js';

/** The store the module uses, and what it must close on shutdown. @internal */
export interface ResilienceStoreHandle {
  readonly store: CircuitBreakerStateStore;
  /** Limiters shared through the store, for limits marked `distributed`. */
  readonly distributedLimiter?: (id: string, options: RateLimiterStrategyOptions) => RateLimiter;
  /** Where adaptive throttling sections with `fleet` share their windows. */
  readonly adaptiveThrottlingStore?: AdaptiveThrottlingStore;
  /** Pending OAuth logins on the same connection, so any instance can finish a login. */
  readonly pendingAuthorizationStore?: () => PendingAuthorizationStore;
  /** Where the instances of a fleet share their stats (the admin module's fleet view). */
  readonly fleetChannel?: () => FleetChannel;
  close(): Promise<void>;
}

/**
 * The instances' stats in the shared store, one snapshot per instance. No method ever rejects or waits
 * for a store in an outage (the Redis one logs each outage once).
 *
 * @internal
 */
export interface FleetChannel {
  /** Stores `snapshot` as `instance`'s, kept `ttl` ms unless published again. */
  publish(instance: string, snapshot: string, ttl: number): Promise<void>;
  /** Every instance's last snapshot; undefined while the store cannot be read. */
  read(): Promise<ReadonlyMap<string, string> | undefined>;
  /** Drops instances' snapshots. */
  forget(instances: readonly string[]): Promise<void>;
}

/** DI token of the store handle. @internal */
export const RESILIENCE_STORE_HANDLE = Symbol.for('nest-resilience:store-handle');

/**
 * Turns the `store` option into a store: an instance is used as given; `{ redis: { … } }` loads the Redis
 * stores (and ioredis) only then, with a dynamic `import()`: `src/redis` opens the connection (`url`,
 * `cluster` or `sentinels`, closed on shutdown) or uses the given `client`, which it leaves open.
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
  const { createRedisStores } = await import('../../redis/redis-resilience-store.factory.js');
  const telemetry = new StrategyTelemetry(
    { pipelineName: undefined, pipelineInstanceName: undefined, strategyName: undefined, strategyType: 'state-store' },
    listeners ?? [],
  );
  // The module's options are typed without ioredis; a `client` given there is an ioredis client.
  return createRedisStores(config as Parameters<typeof createRedisStores>[0], {
    logger: new Logger('ResilienceModule'),
    timeProvider,
    onAvailabilityChange: (available, error) =>
      telemetry.report(
        available ? 'OnStateStoreRestored' : 'OnStateStoreUnavailable',
        available ? 'information' : 'error',
        new ResilienceContext(),
        { error },
      ),
  });
}
