/**
 * What the package's other layers use of the engine that is not its public API. Not a package entry;
 * ESLint refuses it outside `src/`, and refuses imports deeper into `src/core` outside the engine.
 *
 * @internal
 */
export { markReloadable, replacePipelineStrategies } from './pipeline/reloadable.pipeline.js';
export { DISTRIBUTED_LIMITS_SERVICE } from './rate-limiter/rate-limiter.descriptor.js';
export { limiterFromOptions } from './rate-limiter/rate-limiter.options.js';
export { RULES as ENGINE_RULES } from './resilience.messages.js';
export { describeOutcome, errorType } from './telemetry/outcome-description.util.js';
export { closestName, knownNames } from './utils/did-you-mean.util.js';
