import { extendPipelineBuilder, type ResiliencePipelineBuilder } from '../pipeline/resilience-pipeline.builder.js';
import { adaptiveConcurrencyStrategy } from './adaptive-concurrency.descriptor.js';
import type { AdaptiveConcurrencyOptions } from './adaptive-concurrency.options.js';

declare module '../pipeline/resilience-pipeline.builder.js' {
  // eslint-disable-next-line @typescript-eslint/no-unused-vars -- a merged declaration repeats the class's type parameter
  interface ResiliencePipelineBuilder<T> {
    /**
     * Limits concurrent calls with a limit that follows measured latency (Gradient2 or AIMD), shedding
     * `sheddable` calls first; rejections throw `RateLimiterRejectedError` with a `reason`.
     */
    addAdaptiveConcurrencyLimiter(options?: AdaptiveConcurrencyOptions): this;
  }
}

extendPipelineBuilder({
  addAdaptiveConcurrencyLimiter(this: ResiliencePipelineBuilder<unknown>, options: AdaptiveConcurrencyOptions = {}) {
    return this.add(adaptiveConcurrencyStrategy, options);
  },
});
