import type { Redis } from 'ioredis';
import type { ResilienceLoggingOptions } from './observability/resilience-logger.listener.js';
import type { RedisCircuitBreakerStateStoreOptions } from '../redis/redis-circuit-breaker-state.store.js';
import type {
  CircuitBreakerStateStore,
  OutcomePredicate,
  PipelineConfig,
  TelemetryListener,
  TimeProvider,
} from '../core/index.js';

/**
 * The Redis store, as module configuration: a `url` (the module opens and closes the connection) or a
 * `client` of yours (never closed by the module), and the store's options.
 *
 * @publicApi
 */
export type RedisStoreConfig = Omit<
  RedisCircuitBreakerStateStoreOptions,
  'client' | 'logger' | 'onAvailabilityChange' | 'timeProvider'
> & {
  url?: string;
  client?: Redis;
};

/** @publicApi */
export interface ResilienceModuleOptions {
  /** Named pipelines as data; validated when the application starts. */
  pipelines?: Record<string, PipelineConfig>;
  /** Predicates that configuration may name, besides `all-errors`, `transient-network`, `http-transient`, `timeout`. */
  predicates?: Record<string, OutcomePredicate<unknown>>;
  /**
   * Where circuit-breaker state lives. Default: an in-memory store. `{ redis: { url } }` shares it
   * between every instance of the application (ioredis is loaded only then).
   */
  store?: CircuitBreakerStateStore | { redis: RedisStoreConfig };
  /** The clock of every pipeline. Default: the system clock. */
  timeProvider?: TimeProvider;
  telemetryListeners?: TelemetryListener[];
  /**
   * One log line per resilience event through Nest's `Logger` (openings as errors, retries as warnings,
   * …), rate-limited per circuit. On by default; `false` turns it off, options tune levels and limits.
   */
  logging?: ResilienceLoggingOptions | false;
  /**
   * Map `BrokenCircuitError`/`IsolatedCircuitError` to 503, `RateLimiterRejectedError` to 429 (both with
   * `Retry-After`) and `TimeoutRejectedError` to 504 with a global exception filter. Default true.
   */
  httpErrorMapping?: boolean;
  /** The pipeline `ResilienceInterceptor` applies where no `@UseResiliencePipeline` says otherwise. */
  defaultInterceptorPipeline?: string;
  /**
   * Make `currentResilienceContext()` work after a decorated method's first `await` too, through
   * `AsyncLocalStorage`. Off by default: on Node 20, `AsyncLocalStorage` in use makes every `await` of the
   * process about 3× slower. Without it the context is available before the first `await`.
   */
  asyncContextPropagation?: boolean;
}
