import type { ResiliencePipeline } from './resilience.pipeline.js';

/**
 * Makes `pipeline` a handle that `replacePipelineStrategies` can give new strategies (what a registry
 * hands out: one object per name and key, followed through reloads, also by pipelines nesting it).
 *
 * @internal
 */
export function markReloadable<T>(pipeline: ResiliencePipeline<T>): ResiliencePipeline<T> {
  return pipeline._markReloadable();
}

/**
 * Makes `handle` run `next`'s strategies from now on (a reload). Returns a pipeline holding the
 * strategies it ran until now, to be disposed once the reload is done.
 *
 * @internal
 */
export function replacePipelineStrategies<T>(
  handle: ResiliencePipeline<T>,
  next: ResiliencePipeline<T>,
): ResiliencePipeline<T> {
  return handle._adopt(next);
}
