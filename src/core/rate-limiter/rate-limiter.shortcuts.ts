import { extendPipelineBuilder, type ResiliencePipelineBuilder } from '../pipeline/resilience-pipeline.builder.js';
import type { StrategyRegistration } from '../strategy/resilience-strategy.interface.js';
import { rateLimiterStrategy } from './rate-limiter.descriptor.js';
import type { RateLimiterStrategyOptions } from './rate-limiter.options.js';

declare module '../pipeline/resilience-pipeline.builder.js' {
  // eslint-disable-next-line @typescript-eslint/no-unused-vars -- a merged declaration repeats the class's type parameter
  interface ResiliencePipelineBuilder<T> {
    /**
     * Admits calls within rate limits: token bucket, fixed window, sliding window or concurrency, each with
     * an optional queue; chained (`limits`), partitioned by a key from the context (`partitionKey`), or a
     * limiter of your own. Rejections throw `RateLimiterRejectedError` with `retryAfter`.
     */
    addRateLimiter(options?: RateLimiterStrategyOptions): this;
  }
  interface BuiltInStrategies {
    /** The registration of `addRateLimiter`. */
    rateLimiter: (options: RateLimiterStrategyOptions) => StrategyRegistration<RateLimiterStrategyOptions>;
  }
}

extendPipelineBuilder(
  {
    addRateLimiter(this: ResiliencePipelineBuilder<unknown>, options: RateLimiterStrategyOptions = {}) {
      return this.add(rateLimiterStrategy, options);
    },
  },
  { rateLimiter: rateLimiterStrategy },
);
