/**
 * Configuration as data, above the engine: the strategy catalog (one line per strategy section, in
 * composition order), `PipelineConfig` derived from it, reading configuration strings, named
 * predicates and the `ResiliencePipelineRegistry` (named pipelines built from configuration, reloads,
 * inspection).
 *
 * @module
 */
export type {
  ConfigData,
  PipelineConfig,
  PipelineConfigData,
  ConfigSectionName,
  PipelineSection,
  StrategyConfig,
} from './pipeline-config/pipeline-config.model.js';
export { PIPELINE_SECTION_ORDER } from './pipeline-config/pipeline-config.builder.js';
export { parseDuration } from './pipeline-config/config-value.coercion.js';
export { BUILT_IN_PREDICATES, PredicateRegistry } from './pipeline-config/predicate.registry.js';
export {
  ResiliencePipelineRegistry,
  type ConfigurePipeline,
  type ResiliencePipelineRegistryOptions,
} from './registry/resilience-pipeline.registry.js';
export type { CircuitInfo, LimiterInfo } from './registry/registry.inspection.js';
export {
  catalogLine,
  registerStrategy,
  STRATEGY_CATALOG,
  STRATEGY_SECTIONS,
  strategyCatalog,
  unregisterStrategy,
  type CatalogPosition,
  type StrategyCatalogLine,
  type StrategySection,
  type CatalogLineName,
  type StrategySectionName,
} from './catalog/strategy.catalog.js';
