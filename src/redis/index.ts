export {
  RedisCircuitBreakerStateStore,
  type RedisCircuitBreakerStateStoreOptions,
  type StoreLogger,
  type StoreOutageMode,
} from './redis-circuit-breaker-state.store.js';
