import { extendPipelineBuilder, type ResiliencePipelineBuilder } from '../pipeline/resilience-pipeline.builder.js';
import type { RateLimiterStrategyOptions } from '../rate-limiter/rate-limiter.options.js';
import { concurrencyLimiterStrategy } from './concurrency-limiter.descriptor.js';

/** The options of `addConcurrencyLimiter`. @publicApi */
export interface ConcurrencyLimiterStrategyOptions {
  /** Calls that run at once. */
  permitLimit: number;
  /** Calls that wait in FIFO order for a permit. Default 0. */
  queueLimit?: number;
  /** The share of `permitLimit` that `sheddable` calls may fill (they never wait). Default 0.8. */
  sheddableRatio?: number;
  /** Names the strategy in telemetry and validation messages. */
  name?: string;
  /** Runs when a call is rejected. */
  onRejected?: RateLimiterStrategyOptions['onRejected'];
}

declare module '../pipeline/resilience-pipeline.builder.js' {
  // eslint-disable-next-line @typescript-eslint/no-unused-vars -- a merged declaration repeats the class's type parameter
  interface ResiliencePipelineBuilder<T> {
    /** Limits concurrent calls (the bulkhead): `permitLimit` run, `queueLimit` wait in FIFO order. */
    addConcurrencyLimiter(permitLimitOrOptions: number | ConcurrencyLimiterStrategyOptions, queueLimit?: number): this;
  }
}

extendPipelineBuilder({
  addConcurrencyLimiter(
    this: ResiliencePipelineBuilder<unknown>,
    permitLimitOrOptions: number | ConcurrencyLimiterStrategyOptions,
    queueLimit = 0,
  ) {
    const options =
      typeof permitLimitOrOptions === 'number'
        ? { permitLimit: permitLimitOrOptions, queueLimit }
        : permitLimitOrOptions;
    return this.add(concurrencyLimiterStrategy, { kind: 'concurrency', ...options });
  },
});
