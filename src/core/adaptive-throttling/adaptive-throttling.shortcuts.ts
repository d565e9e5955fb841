import { extendPipelineBuilder, type ResiliencePipelineBuilder } from '../pipeline/resilience-pipeline.builder.js';
import { adaptiveThrottlingStrategy } from './adaptive-throttling.descriptor.js';
import type { AdaptiveThrottlingStrategyOptions } from './adaptive-throttling.options.js';

declare module '../pipeline/resilience-pipeline.builder.js' {
  interface ResiliencePipelineBuilder<T> {
    /**
     * Rejects calls locally while the dependency refuses requests (Google SRE client-side throttling): with
     * probability `max(0, (requests − k × accepts) / (requests + 1))` over a sliding window. Rejections
     * throw `AdaptiveThrottlingRejectedError`.
     */
    addAdaptiveThrottling(options?: AdaptiveThrottlingStrategyOptions<T>): this;
  }
}

extendPipelineBuilder({
  addAdaptiveThrottling(this: ResiliencePipelineBuilder<unknown>, options: AdaptiveThrottlingStrategyOptions = {}) {
    return this.add(adaptiveThrottlingStrategy, options);
  },
});
