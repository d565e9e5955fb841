import type {
  CircuitBreakerStateStore,
  OutcomePredicate,
  PipelineConfig,
  TelemetryListener,
  TimeProvider,
} from '../core/index.js';

/** @publicApi */
export interface ResilienceModuleOptions {
  /** Named pipelines as data; validated when the application starts. */
  pipelines?: Record<string, PipelineConfig>;
  /** Predicates that configuration may name, besides `all-errors`, `transient-network`, `http-transient`, `timeout`. */
  predicates?: Record<string, OutcomePredicate<unknown>>;
  /** Where circuit-breaker state lives. Default: an in-memory store. */
  store?: CircuitBreakerStateStore;
  /** The clock of every pipeline. Default: the system clock. */
  timeProvider?: TimeProvider;
  telemetryListeners?: TelemetryListener[];
  /**
   * Map `BrokenCircuitError`/`IsolatedCircuitError` to 503, `RateLimiterRejectedError` to 429 (both with
   * `Retry-After`) and `TimeoutRejectedError` to 504 with a global exception filter. Default true.
   */
  httpErrorMapping?: boolean;
  /** The pipeline `ResilienceInterceptor` applies where no `@UseResiliencePipeline` says otherwise. */
  defaultInterceptorPipeline?: string;
}
