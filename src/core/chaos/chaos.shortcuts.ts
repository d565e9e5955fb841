import { extendPipelineBuilder, type ResiliencePipelineBuilder } from '../pipeline/resilience-pipeline.builder.js';
import type { StrategyRegistration } from '../strategy/resilience-strategy.interface.js';
import {
  chaosBehaviorStrategy,
  chaosFaultStrategy,
  chaosLatencyStrategy,
  chaosOutcomeStrategy,
} from './chaos.descriptors.js';
import type {
  ChaosBehaviorOptions,
  ChaosFaultOptions,
  ChaosLatencyOptions,
  ChaosOutcomeOptions,
} from './chaos.options.js';

declare module '../pipeline/resilience-pipeline.builder.js' {
  interface ResiliencePipelineBuilder<T> {
    /** Injects faults: throws `fault` instead of calling, for `injectionRate` of the calls (Simmy). */
    addChaosFault(options: ChaosFaultOptions): this;
    /** Injects latency before the call (cancellable). */
    addChaosLatency(options: ChaosLatencyOptions): this;
    /** Injects an outcome (a value or an error) instead of calling. */
    addChaosOutcome(options: ChaosOutcomeOptions<T>): this;
    /** Injects a behaviour (any code) before the call. */
    addChaosBehavior(options: ChaosBehaviorOptions): this;
  }
  interface BuiltInStrategies {
    /** The registration of `addChaosFault`. */
    chaosFault: (options: ChaosFaultOptions) => StrategyRegistration<ChaosFaultOptions>;
    /** The registration of `addChaosLatency`. */
    chaosLatency: (options: ChaosLatencyOptions) => StrategyRegistration<ChaosLatencyOptions>;
    /** The registration of `addChaosOutcome`. */
    chaosOutcome: <T>(options: ChaosOutcomeOptions<T>) => StrategyRegistration<ChaosOutcomeOptions<T>>;
    /** The registration of `addChaosBehavior`. */
    chaosBehavior: (options: ChaosBehaviorOptions) => StrategyRegistration<ChaosBehaviorOptions>;
  }
}

extendPipelineBuilder(
  {
    addChaosFault(this: ResiliencePipelineBuilder<unknown>, options: ChaosFaultOptions) {
      return this.add(chaosFaultStrategy, options);
    },
    addChaosLatency(this: ResiliencePipelineBuilder<unknown>, options: ChaosLatencyOptions) {
      return this.add(chaosLatencyStrategy, options);
    },
    addChaosOutcome(this: ResiliencePipelineBuilder<unknown>, options: ChaosOutcomeOptions) {
      return this.add(chaosOutcomeStrategy, options);
    },
    addChaosBehavior(this: ResiliencePipelineBuilder<unknown>, options: ChaosBehaviorOptions) {
      return this.add(chaosBehaviorStrategy, options);
    },
  },
  {
    chaosFault: chaosFaultStrategy,
    chaosLatency: chaosLatencyStrategy,
    chaosOutcome: chaosOutcomeStrategy,
    chaosBehavior: chaosBehaviorStrategy,
  },
);
