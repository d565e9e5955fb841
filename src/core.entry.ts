/**
 * The `./core` entry: the engine (pipelines, every strategy, the context, telemetry) and configuration
 * as data (the strategy catalog, `PipelineConfig`, the registry). No dependencies: it never loads
 * NestJS or an optional peer.
 *
 * @module
 */
export * from './core/index.js';
export * from './config/index.js';
