import {
  isReloadablePipeline,
  strategyOptionsOf,
  type ResiliencePipeline,
} from '../core/pipeline/resilience.pipeline.js';

/** One strategy of a pipeline, for assertions in tests. @publicApi */
export interface StrategyDescriptor {
  /** The kind of strategy: `retry`, `timeout`, `circuit-breaker`, `rate-limiter`, … (`custom` for a strategy added without a type). */
  readonly type: string;
  /** The strategy's `name` option, when it was given one. */
  readonly name: string | undefined;
  /**
   * The options the strategy was built with, as the builder received them: for a pipeline from
   * configuration, after its strings were read and its predicate names resolved; the defaults a strategy
   * applies itself are not filled in. `undefined` for a strategy whose options were not recorded.
   */
  readonly options: Readonly<Record<string, unknown>> | undefined;
}

/**
 * What a pipeline runs, outermost strategy first (Polly.Testing's `GetPipelineDescriptor`). A nested
 * pipeline's strategies appear in its place.
 *
 * @publicApi
 */
export interface PipelineDescriptor {
  /** Every strategy, outermost first. */
  readonly strategies: readonly StrategyDescriptor[];
  /** The outermost strategy, or `undefined` for an empty pipeline. */
  readonly firstStrategy: StrategyDescriptor | undefined;
  /** True for a pipeline a registry hands out: a reload replaces its strategies (the object stays the same). */
  readonly isReloadable: boolean;
}

/**
 * Describes `pipeline` for assertions: its strategies in order with their type, name and options. Works
 * on pipelines from `ResiliencePipelineBuilder` and on those a registry (or `ResilienceModule`) hands
 * out; for the latter it describes what the pipeline runs now, so call it again after a reload.
 *
 * ```ts
 * const descriptor = getPipelineDescriptor(registry.getPipeline('orders'));
 * expect(descriptor.strategies.map((s) => s.type)).toEqual(['retry', 'circuit-breaker', 'timeout']);
 * expect(descriptor.strategies[0].options).toMatchObject({ maxRetryAttempts: 3 });
 * ```
 *
 * @publicApi
 */
export function getPipelineDescriptor(pipeline: ResiliencePipeline<never>): PipelineDescriptor {
  const strategies = pipeline.describe().map((description): StrategyDescriptor => {
    const options = strategyOptionsOf(description);
    return {
      type: description.type,
      name: description.name,
      options:
        options !== null && typeof options === 'object' ? { ...(options as Record<string, unknown>) } : undefined,
    };
  });
  return { strategies, firstStrategy: strategies[0], isReloadable: isReloadablePipeline(pipeline) };
}
