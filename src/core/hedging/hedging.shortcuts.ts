import { extendPipelineBuilder, type ResiliencePipelineBuilder } from '../pipeline/resilience-pipeline.builder.js';
import type { StrategyRegistration } from '../strategy/resilience-strategy.interface.js';
import { hedgingStrategy } from './hedging.descriptor.js';
import type { HedgingStrategyOptions } from './hedging.options.js';

declare module '../pipeline/resilience-pipeline.builder.js' {
  interface ResiliencePipelineBuilder<T> {
    /**
     * Races extra attempts against a slow or failing one (Polly `AddHedging`): latency mode (`delay` > 0),
     * parallel (0) or fallback (< 0).
     */
    addHedging(options?: HedgingStrategyOptions<T>): this;
  }
  interface BuiltInStrategies {
    /** The registration of `addHedging`. */
    hedging: <T>(options: HedgingStrategyOptions<T>) => StrategyRegistration<HedgingStrategyOptions<T>>;
  }
}

extendPipelineBuilder(
  {
    addHedging(this: ResiliencePipelineBuilder<unknown>, options: HedgingStrategyOptions = {}) {
      return this.add(hedgingStrategy, options);
    },
  },
  { hedging: hedgingStrategy },
);
