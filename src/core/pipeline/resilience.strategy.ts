import type { ResilienceContext } from '../context/resilience.context.js';
import type { StrategyTelemetry } from '../telemetry/strategy.telemetry.js';
import type { TimeProvider } from '../time/time.provider.js';

/**
 * Runs the rest of the pipeline (the inner strategies and then the callback). It settles the way the
 * callback did: fulfilled with its value or rejected with its error. It never throws synchronously.
 *
 * @publicApi
 */
export type StrategyNext<T> = (context: ResilienceContext) => Promise<T>;

/**
 * One layer of a pipeline. A strategy receives the rest of the pipeline as `next`, may call it any number
 * of times, and settles with the value or error the caller should see.
 *
 * Inside the engine a settled promise *is* the outcome: wrapping every value in an `Outcome` object would
 * cost an extra promise hop per layer (measured: 3.5× a bare `await` instead of 1.5× for one layer).
 * `Outcome` objects are built only where a user callback or predicate needs one.
 *
 * @publicApi
 */
export interface ResilienceStrategy<T = unknown> {
  execute(next: StrategyNext<T>, context: ResilienceContext): Promise<T>;
  /** Releases what the strategy holds (timers, queues); called by `ResiliencePipeline.dispose()`. */
  dispose?(): void | Promise<void>;
}

/** What a strategy factory receives from the builder. @publicApi */
export interface StrategyBuilderContext {
  readonly timeProvider: TimeProvider;
  /** Returns a number in [0, 1); injectable for deterministic jitter and chaos. */
  readonly random: () => number;
  readonly telemetry: StrategyTelemetry;
  readonly pipelineName: string | undefined;
  readonly pipelineInstanceName: string | undefined;
}
