import { extendPipelineBuilder, type ResiliencePipelineBuilder } from '../pipeline/resilience-pipeline.builder.js';
import type { StrategyRegistration } from '../strategy/resilience-strategy.interface.js';
import { fallbackStrategy } from './fallback.descriptor.js';
import type { FallbackStrategyOptions } from './fallback.options.js';

declare module '../pipeline/resilience-pipeline.builder.js' {
  interface ResiliencePipelineBuilder<T> {
    /** Replaces handled outcomes with a fallback value or action (Polly `AddFallback`). */
    addFallback(options: FallbackStrategyOptions<T>): this;
  }
  interface BuiltInStrategies {
    /** The registration of `addFallback`. */
    fallback: <T>(options: FallbackStrategyOptions<T>) => StrategyRegistration<FallbackStrategyOptions<T>>;
  }
}

extendPipelineBuilder(
  {
    addFallback(this: ResiliencePipelineBuilder<unknown>, options: FallbackStrategyOptions) {
      return this.add(fallbackStrategy, options);
    },
  },
  { fallback: fallbackStrategy },
);
