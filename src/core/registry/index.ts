export type {
  AdaptiveConcurrencyConfig,
  AdaptiveThrottlingConfig,
  ChaosFaultConfig,
  ChaosLatencyConfig,
  ConcurrencyLimiterConfig,
  HedgingConfig,
  RateLimiterConfig,
  CircuitBreakerConfig,
  FallbackConfig,
  ConfigData,
  PipelineConfig,
  PipelineConfigData,
  PipelineSection,
  PredicateReference,
  RetryConfig,
  StrategyConfig,
  TimeoutConfig,
} from './pipeline-config.model.js';
export { PIPELINE_SECTION_ORDER } from './pipeline-config.builder.js';
export { parseDuration } from './config-value.coercion.js';
export { BUILT_IN_PREDICATES, PredicateRegistry } from './predicate.registry.js';
export {
  ResiliencePipelineRegistry,
  type ConfigurePipeline,
  type ResiliencePipelineRegistryOptions,
} from './resilience-pipeline.registry.js';
export type { CircuitInfo, LimiterInfo } from './registry.inspection.js';
