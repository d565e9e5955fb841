/**
 * The engine's public API plus the pieces the package's own integrations (the Nest layer) build on.
 * Not part of the public API.
 *
 * @internal
 */
export * from './index.js';
export { applyPipelineConfig } from './registry/pipeline-config.builder.js';
export { abortReason } from './time/time.provider.js';
export { isThenable } from './utils/is-thenable.util.js';
export { CancellationScope } from './context/cancellation.scope.js';
