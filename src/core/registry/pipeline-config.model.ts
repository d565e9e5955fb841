import type { CircuitBreakerStrategyOptions } from '../circuit-breaker/circuit-breaker.options.js';
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

/** @publicApi */
export type RetryConfig = Omit<RetryStrategyOptions<unknown>, 'shouldHandle'> & { shouldHandle?: PredicateReference };

/** @publicApi */
export type CircuitBreakerConfig = Omit<CircuitBreakerStrategyOptions<unknown>, 'shouldHandle' | 'stateStore'> & {
  shouldHandle?: PredicateReference;
};

/** @publicApi */
export type TimeoutConfig = number | TimeoutStrategyOptions;

/** @publicApi */
export type FallbackConfig = Omit<FallbackStrategyOptions<unknown>, 'shouldHandle'> & {
  shouldHandle?: PredicateReference;
};

/**
 * The strategies of a named pipeline as plain data (JSON, YAML, environment config). Sections are
 * composed in a fixed order, outermost first: `fallback` → `totalTimeout` → `retry` → `circuitBreaker` →
 * `timeout` (per attempt). Give `strategies` instead to choose the order yourself.
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
  fallback?: FallbackConfig;
  /** A timeout around everything inside it, retries included. */
  totalTimeout?: TimeoutConfig;
  retry?: RetryConfig;
  circuitBreaker?: CircuitBreakerConfig;
  /** A timeout per attempt (inside retry and the circuit breaker). */
  timeout?: TimeoutConfig;
  /** An explicit order, outermost first; exclusive with the named sections. */
  strategies?: readonly StrategyConfig[];
}

/** One entry of `PipelineConfig.strategies`. @publicApi */
export type StrategyConfig =
  | ({ type: 'fallback' } & FallbackConfig)
  | ({ type: 'retry' } & RetryConfig)
  | ({ type: 'circuitBreaker' } & CircuitBreakerConfig)
  | ({ type: 'timeout' } & TimeoutStrategyOptions);

/** The named sections of a pipeline config, outermost first. @publicApi */
export const PIPELINE_SECTION_ORDER = ['fallback', 'totalTimeout', 'retry', 'circuitBreaker', 'timeout'] as const;

/** @publicApi */
export type PipelineSection = (typeof PIPELINE_SECTION_ORDER)[number];
