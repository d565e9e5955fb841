export {
  RedisCircuitBreakerStateStore,
  type RedisCircuitBreakerStateStoreOptions,
  type StoreOutageMode,
} from './redis-circuit-breaker-state.store.js';
export {
  RedisAdaptiveThrottlingStore,
  type RedisAdaptiveThrottlingStoreOptions,
} from './redis-adaptive-throttling.store.js';
export { RedisRateLimiter, type DistributedRateLimit, type RedisRateLimiterOptions } from './redis-rate-limiter.js';
export {
  PendingStoreUnavailableError,
  RedisPendingAuthorizationStore,
  type RedisPendingAuthorizationStoreOptions,
} from './redis-pending-authorization.store.js';
export type { StoreLogger } from './redis-availability.js';
export type { RedisConnectionOptions, RedisNodeAddress } from './redis-connection.factory.js';
export type { RedisStoresOptions } from './redis-resilience-store.factory.js';
