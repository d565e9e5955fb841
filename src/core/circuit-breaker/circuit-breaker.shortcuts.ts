import { extendPipelineBuilder, type ResiliencePipelineBuilder } from '../pipeline/resilience-pipeline.builder.js';
import type { StrategyRegistration } from '../strategy/resilience-strategy.interface.js';
import { circuitBreakerStrategy } from './circuit-breaker.descriptor.js';
import type { CircuitBreakerStrategyOptions } from './circuit-breaker.options.js';

declare module '../pipeline/resilience-pipeline.builder.js' {
  interface ResiliencePipelineBuilder<T> {
    /**
     * Stops calling a failing dependency for a while (Polly `AddCircuitBreaker`, plus consecutive,
     * count-window and slow-call kinds, several half-open probes and a pluggable state store).
     */
    addCircuitBreaker(options?: CircuitBreakerStrategyOptions<T>): this;
  }
  interface BuiltInStrategies {
    /** The registration of `addCircuitBreaker`. */
    circuitBreaker: <T>(
      options: CircuitBreakerStrategyOptions<T>,
    ) => StrategyRegistration<CircuitBreakerStrategyOptions<T>>;
  }
}

extendPipelineBuilder(
  {
    addCircuitBreaker(this: ResiliencePipelineBuilder<unknown>, options: CircuitBreakerStrategyOptions = {}) {
      return this.add(circuitBreakerStrategy, options);
    },
  },
  { circuitBreaker: circuitBreakerStrategy },
);
