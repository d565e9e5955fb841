import type {
  ChaosFaultConfig,
  ChaosLatencyConfig,
  CircuitBreakerConfig,
  ConcurrencyLimiterConfig,
  FallbackConfig,
  HedgingConfig,
  RateLimiterConfig,
  RetryConfig,
  TimeoutConfig,
} from '../../core/index.js';
import type { STRATEGY_CATALOG } from '../catalog/strategy.catalog.js';

export type { PredicateReference } from '../../core/index.js';
export type {
  ChaosFaultConfig,
  ChaosLatencyConfig,
  CircuitBreakerConfig,
  ConcurrencyLimiterConfig,
  FallbackConfig,
  HedgingConfig,
  RateLimiterConfig,
  RetryConfig,
  TimeoutConfig,
};

type CatalogLines = (typeof STRATEGY_CATALOG)[number];
type SectionLine = Exclude<CatalogLines, { readonly __config?: never }>;

/** The sections of the catalog with the type of their data. */
type CatalogSections = { [L in SectionLine as L['name']]?: NonNullable<L['__config']> };

/**
 * The strategies of a named pipeline as plain data (JSON, YAML, environment config): one optional
 * section per line of the strategy catalog, composed in the catalog's order, outermost first:
 * `fallback` → `totalTimeout` → `rateLimiter` → `concurrencyLimiter` → `adaptiveConcurrency` →
 * `hedging` → `retry` → `adaptiveThrottling` → `circuitBreaker` → `timeout` (per attempt) → `chaosLatency` → `chaosFault`. Give `strategies` instead
 * to choose the order yourself. A strategy registered outside the package adds its section by
 * declaration merging.
 *
 * ```json
 * { "retry": { "maxRetryAttempts": 3, "backoffType": "exponential", "delay": 200, "shouldHandle": "transient-network" },
 *   "circuitBreaker": { "kind": "consecutive", "failureThreshold": 5, "breakDuration": 30000 },
 *   "timeout": 2000 }
 * ```
 *
 * @publicApi
 */
export interface PipelineConfig extends CatalogSections {
  /** An explicit order, outermost first; exclusive with the named sections. */
  strategies?: readonly StrategyConfig[];
}

/** One entry of `PipelineConfig.strategies`: a section's data, in object form, with its name as `type`. @publicApi */
export type StrategyConfig = {
  [S in Exclude<keyof PipelineConfig, 'strategies' | 'totalTimeout'>]-?: { type: S } & Extract<
    NonNullable<PipelineConfig[S]>,
    object
  >;
}[Exclude<keyof PipelineConfig, 'strategies' | 'totalTimeout'>];

/** The name of a section of a `PipelineConfig` (`retry`, `timeout`, …; every key but `strategies`). @publicApi */
export type ConfigSectionName = Exclude<keyof PipelineConfig, 'strategies'>;

/** @deprecated Use `ConfigSectionName`. @publicApi */
export type PipelineSection = ConfigSectionName;

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
