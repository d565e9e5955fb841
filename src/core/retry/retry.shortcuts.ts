import { extendPipelineBuilder, type ResiliencePipelineBuilder } from '../pipeline/resilience-pipeline.builder.js';
import type { StrategyRegistration } from '../strategy/resilience-strategy.interface.js';
import { retryStrategy } from './retry.descriptor.js';
import type { RetryStrategyOptions } from './retry.options.js';

declare module '../pipeline/resilience-pipeline.builder.js' {
  interface ResiliencePipelineBuilder<T> {
    /** Retries handled outcomes with a backoff (Polly `AddRetry`). */
    addRetry(options?: RetryStrategyOptions<T>): this;
  }
  interface BuiltInStrategies {
    /** The registration of `addRetry`. */
    retry: <T>(options: RetryStrategyOptions<T>) => StrategyRegistration<RetryStrategyOptions<T>>;
  }
}

extendPipelineBuilder(
  {
    addRetry(this: ResiliencePipelineBuilder<unknown>, options: RetryStrategyOptions = {}) {
      return this.add(retryStrategy, options);
    },
  },
  { retry: retryStrategy },
);
