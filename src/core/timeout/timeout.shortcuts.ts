import { extendPipelineBuilder, type ResiliencePipelineBuilder } from '../pipeline/resilience-pipeline.builder.js';
import type { StrategyRegistration } from '../strategy/resilience-strategy.interface.js';
import { timeoutStrategy } from './timeout.descriptor.js';
import type { TimeoutStrategyOptions } from './timeout.options.js';

declare module '../pipeline/resilience-pipeline.builder.js' {
  // eslint-disable-next-line @typescript-eslint/no-unused-vars -- a merged declaration repeats the class's type parameter
  interface ResiliencePipelineBuilder<T> {
    /** Cancels the inner call after a timeout, given in milliseconds or as options (Polly `AddTimeout`). */
    addTimeout(timeoutOrOptions: number | TimeoutStrategyOptions): this;
  }
  interface BuiltInStrategies {
    /** The registration of `addTimeout`. */
    timeout: (options: TimeoutStrategyOptions) => StrategyRegistration<TimeoutStrategyOptions>;
  }
}

extendPipelineBuilder(
  {
    addTimeout(this: ResiliencePipelineBuilder<unknown>, timeoutOrOptions: number | TimeoutStrategyOptions) {
      const options = typeof timeoutOrOptions === 'number' ? { timeout: timeoutOrOptions } : timeoutOrOptions;
      return this.add(timeoutStrategy, options);
    },
  },
  { timeout: timeoutStrategy },
);
