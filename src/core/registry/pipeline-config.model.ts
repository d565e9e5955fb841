import type { AdaptiveConcurrencyOptions } from '../adaptive-concurrency/adaptive-concurrency.options.js';
import type { AdaptiveThrottlingStrategyOptions } from '../adaptive-throttling/adaptive-throttling.options.js';
import type { ChaosFaultOptions, ChaosLatencyOptions } from '../chaos/chaos.options.js';
import type { CircuitBreakerStrategyOptions } from '../circuit-breaker/circuit-breaker.options.js';
import type { HedgingStrategyOptions } from '../hedging/hedging.options.js';
import type { RateLimiterStrategyOptions } from '../rate-limiter/rate-limiter.options.js';
import type { FallbackStrategyOptions } from '../fallback/fallback.options.js';
import type { OutcomePredicate } from '../outcome.predicates.js';
import type { RetryStrategyOptions } from '../retry/retry.options.js';
import type { TimeoutStrategyOptions } from '../timeout/timeout.options.js';

/**
 * A predicate given by registered name (`"transient-network"`), by several names (handled when any
 * handles), or as a function when the configuration is code.
 *
 * @publicApi
 */
export type PredicateReference = string | readonly string[] | OutcomePredicate<unknown>;

/** The `retry` section of a pipeline configuration: `RetryStrategyOptions` with `shouldHandle` as a predicate reference. @publicApi */
export type RetryConfig = Omit<RetryStrategyOptions<unknown>, 'shouldHandle'> & { shouldHandle?: PredicateReference };

/** The `circuitBreaker` section: `CircuitBreakerStrategyOptions` with `shouldHandle` as a predicate reference (the store comes from the module). @publicApi */
export type CircuitBreakerConfig = Omit<CircuitBreakerStrategyOptions<unknown>, 'shouldHandle' | 'stateStore'> & {
  shouldHandle?: PredicateReference;
};

/** The `timeout` and `totalTimeout` sections: milliseconds, or `TimeoutStrategyOptions`. @publicApi */
export type TimeoutConfig = number | TimeoutStrategyOptions;

/** The `rateLimiter` section: `RateLimiterStrategyOptions`. @publicApi */
export type RateLimiterConfig = RateLimiterStrategyOptions;

/** Concurrent calls, or the limit with a queue (and the share `sheddable` calls may fill). @publicApi */
export type ConcurrencyLimiterConfig =
  number | { permitLimit: number; queueLimit?: number; sheddableRatio?: number; name?: string };

/** The `adaptiveConcurrency` section: an initial limit, or `AdaptiveConcurrencyOptions` without the callbacks. @publicApi */
export type AdaptiveConcurrencyConfig =
  number | Omit<AdaptiveConcurrencyOptions, 'isDropped' | 'onRejected' | 'onLimitChanged'>;

/** The `hedging` section: `HedgingStrategyOptions` with `shouldHandle` as a predicate reference. @publicApi */
export type HedgingConfig = Omit<HedgingStrategyOptions<unknown>, 'shouldHandle'> & {
  shouldHandle?: PredicateReference;
};

/**
 * The `adaptiveThrottling` section: `AdaptiveThrottlingStrategyOptions` with `shouldHandle` as a
 * predicate reference (the state provider is for code).
 *
 * @publicApi
 */
export type AdaptiveThrottlingConfig = Omit<
  AdaptiveThrottlingStrategyOptions<unknown>,
  'shouldHandle' | 'stateProvider'
> & {
  shouldHandle?: PredicateReference;
};

/** A fault to inject; `message` makes an `Error` with that message. @publicApi */
export type ChaosFaultConfig = Omit<ChaosFaultOptions, 'fault'> & { fault?: unknown; message?: string };

/** The `chaosLatency` section: `ChaosLatencyOptions`. @publicApi */
export type ChaosLatencyConfig = ChaosLatencyOptions;

/** The `fallback` section: `FallbackStrategyOptions` with `shouldHandle` as a predicate reference. @publicApi */
export type FallbackConfig = Omit<FallbackStrategyOptions<unknown>, 'shouldHandle'> & {
  shouldHandle?: PredicateReference;
};

/**
 * The strategies of a named pipeline as plain data (JSON, YAML, environment config). Sections are
 * composed in a fixed order, outermost first: `fallback` → `totalTimeout` → `rateLimiter` →
 * `concurrencyLimiter` → `adaptiveConcurrency` → `hedging` → `retry` → `adaptiveThrottling` → `circuitBreaker` → `timeout` (per attempt) →
 * `chaosLatency` → `chaosFault`. Give `strategies` instead to choose the order yourself.
 *
 * ```json
 * { "retry": { "maxRetryAttempts": 3, "backoffType": "exponential", "delay": 200, "shouldHandle": "transient-network" },
 *   "circuitBreaker": { "kind": "consecutive", "failureThreshold": 5, "breakDuration": 30000 },
 *   "timeout": 2000 }
 * ```
 *
 * @publicApi
 */
export interface PipelineConfig {
  /** The outermost section: replaces the final failure. */
  fallback?: FallbackConfig;
  /** A timeout around everything inside it, retries included. */
  totalTimeout?: TimeoutConfig;
  /** Shared by every instance handed out for the same key and every method naming the pipeline. */
  rateLimiter?: RateLimiterConfig;
  /** Shared like `rateLimiter`. */
  concurrencyLimiter?: ConcurrencyLimiterConfig;
  /** A concurrency limit that follows latency; one per pipeline instance. */
  adaptiveConcurrency?: AdaptiveConcurrencyConfig;
  /** Hedged attempts against slow or failing calls. */
  hedging?: HedgingConfig;
  /** Retries of handled failures. */
  retry?: RetryConfig;
  /** Client-side throttling of each attempt when the dependency refuses requests (one window per pipeline instance). */
  adaptiveThrottling?: AdaptiveThrottlingConfig;
  /** One circuit per pipeline instance, in the registry's store. */
  circuitBreaker?: CircuitBreakerConfig;
  /** A timeout per attempt (inside retry and the circuit breaker). */
  timeout?: TimeoutConfig;
  /** Chaos engineering: latency injected into a share of the calls. */
  chaosLatency?: ChaosLatencyConfig;
  /** Chaos engineering: faults injected into a share of the calls. */
  chaosFault?: ChaosFaultConfig;
  /** An explicit order, outermost first; exclusive with the named sections. */
  strategies?: readonly StrategyConfig[];
}

/** One entry of `PipelineConfig.strategies`. @publicApi */
export type StrategyConfig =
  | ({ type: 'fallback' } & FallbackConfig)
  | ({ type: 'retry' } & RetryConfig)
  | ({ type: 'adaptiveThrottling' } & AdaptiveThrottlingConfig)
  | ({ type: 'circuitBreaker' } & CircuitBreakerConfig)
  | ({ type: 'timeout' } & TimeoutStrategyOptions)
  | ({ type: 'rateLimiter' } & RateLimiterConfig)
  | { type: 'concurrencyLimiter'; permitLimit: number; queueLimit?: number; sheddableRatio?: number; name?: string }
  | ({ type: 'adaptiveConcurrency' } & Exclude<AdaptiveConcurrencyConfig, number>)
  | ({ type: 'hedging' } & HedgingConfig)
  | ({ type: 'chaosLatency' } & ChaosLatencyConfig)
  | ({ type: 'chaosFault' } & ChaosFaultConfig);

/** The name of a section of a pipeline config. @publicApi */
export type PipelineSection = Exclude<keyof PipelineConfig, 'strategies'>;

/**
 * A value as configuration data may carry it: where a number is expected, also a string (`"3"`, or a
 * duration such as `"200ms"`, `"2s"`, `"00:00:30"`); where a boolean is, also `"true"` or `"false"`.
 * Functions and everything else keep their type.
 *
 * @publicApi
 */
export type ConfigData<T> = T extends number
  ? T | string
  : T extends boolean
    ? T | 'true' | 'false'
    : T extends (...args: never[]) => unknown
      ? T
      : T extends readonly (infer U)[]
        ? readonly ConfigData<U>[]
        : T extends object
          ? { [K in keyof T]: ConfigData<T[K]> }
          : T;

/**
 * A `PipelineConfig` as module configuration accepts it (`ResilienceModule.forRoot`, `forFeature`,
 * `registry.addPipelines`, `registry.reload`): values may be strings, read before validation.
 *
 * @publicApi
 */
export type PipelineConfigData = ConfigData<PipelineConfig>;
