import type { ResilienceLoggingOptions } from '../observability/resilience-logger.listener.js';
import type { CircuitBreakerStateStore, OutcomePredicate, TelemetryListener, TimeProvider } from '../../core/index.js';
import type { PipelineConfigData } from '../../config/index.js';
import type { ResilienceThrottleOptions } from './resilience-throttle.options.js';

/** A Redis server's address. @publicApi */
export interface RedisNodeConfig {
  host: string;
  port: number;
}

/**
 * An ioredis `Redis` or `Cluster` client, described by what the module uses of it (so these types do
 * not need ioredis).
 *
 * @publicApi
 */
export interface RedisClientLike {
  defineCommand(name: string, definition: { lua: string; numberOfKeys?: number }): void;
}

/**
 * The Redis store, as module configuration. Where Redis is: exactly one of `url` (one server),
 * `cluster` (seed nodes of a Redis Cluster), `sentinels` + `name` (a Sentinel-managed primary, followed
 * through failovers) — the module opens that connection and closes it on shutdown — or `client`, an
 * ioredis `Redis` or `Cluster` of yours that the module never closes. The same connection serves the
 * circuit store, the `distributed` rate limiters, the adaptive throttling windows with `fleet` and the
 * OAuth pending-login store.
 *
 * @publicApi
 */
export interface RedisStoreConfig {
  url?: string;
  cluster?: (string | RedisNodeConfig)[];
  sentinels?: RedisNodeConfig[];
  /** The Sentinel master group name. */
  name?: string;
  username?: string;
  password?: string;
  sentinelUsername?: string;
  sentinelPassword?: string;
  db?: number;
  tls?: boolean;
  client?: RedisClientLike;
  /**
   * Namespaces the keys (one per application). Default: the `name` of the package.json in the working
   * directory; without one, required (the start fails).
   */
  keyPrefix?: string;
  /** The longest a call waits for Redis before the outage mode takes over, in ms. Default 100. */
  operationTimeout?: number;
  /** How long after a failure Redis is left alone before it is tried again, in ms. Default 1000. */
  retryInterval?: number;
  /** While Redis cannot be reached: `local` (default), `allow` or `reject`. */
  outageMode?: 'local' | 'allow' | 'reject';
  /** Serve circuits last seen closed from memory for this many ms. Default 0. */
  localCacheTtl?: number;
  /** Successes are sent with the next call, at the latest after this many ms. Default 100. */
  flushInterval?: number;
}

/** @publicApi */
export interface ResilienceModuleOptions {
  /** Named pipelines as data; validated when the application starts. */
  pipelines?: Record<string, PipelineConfigData>;
  /**
   * Predicates that configuration may name, besides the built-in `all-errors`, `transient-network`,
   * `http-transient`, `http-failure`, `http-retryable` and `timeout`.
   */
  predicates?: Record<string, OutcomePredicate<unknown>>;
  /**
   * Where circuit-breaker state lives. Default: an in-memory store. `{ redis: { url } }` (or
   * `{ cluster }`, `{ sentinels, name }`, `{ client }`) shares it between every instance of the
   * application (ioredis is loaded only then).
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
  /**
   * The name HTTP error bodies show for a pipeline (`{ 'http:inventory': 'stock service' }`; a decorated
   * method's pipeline is named `Class.method`). Default: the pipeline's name. Bodies never show circuit
   * keys, instance keys or upstream URLs; the full error is logged at debug level.
   */
  publicNames?: Record<string, string>;
  /** The pipeline `ResilienceInterceptor` applies where no `@UseResiliencePipeline` says otherwise. */
  defaultInterceptorPipeline?: string;
  /**
   * Make `currentResilienceContext()` work after a decorated method's first `await` too, through
   * `AsyncLocalStorage`. Off by default: on Node 20, `AsyncLocalStorage` in use makes every `await` of the
   * process about 3× slower. Without it the context is available before the first `await`.
   */
  asyncContextPropagation?: boolean;
  /**
   * The request header an HTTP route's caller may set to `critical`, `default` or `sheddable` to give
   * the call that criticality (overriding `@WithCriticality`); the limiters shed `sheddable` calls first.
   * Read on decorated controller routes. Default `x-criticality`; `false` ignores every header.
   */
  criticalityHeader?: string | false;
  /**
   * Per-client limits for inbound requests, applied by `ResilienceThrottleGuard` (globally with
   * `APP_GUARD`, or `@UseGuards`): named limits on the rate limiters of the core, or in Redis with
   * `distributed: true`; answers carry `RateLimit-*` headers, a rejection is 429 with `Retry-After`.
   * Validated at start-up with everything else.
   */
  throttle?: ResilienceThrottleOptions;
}
