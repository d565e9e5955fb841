// A strategy of one's own, written the documented way (ARCHITECTURE.md, "Adding a strategy"): this
// folder plus one catalog line (`registerStrategy`, in the test that uses it).
import {
  defineStrategy,
  option,
  section,
  type OptionsSchema,
  type ResilienceStrategy,
  type StrategyBuilderContext,
  type StrategyDescriptor,
  type StrategyNext,
  type ResilienceContext,
} from '../../src/index.js';

/** Options of the toy strategy: it multiplies a numeric result. */
export interface ToyStrategyOptions {
  name?: string;
  /** The factor. Default 2. */
  factor?: number;
  /** Whether it multiplies at all. Default true. */
  enabled?: boolean;
}

/** The `toy` section of a pipeline configuration (a bare number is the factor). */
export type ToyConfig = number | ToyStrategyOptions;

declare module '../../src/core/index.js' {
  interface ResilienceEventMap {
    /** The toy strategy multiplied a result. */
    OnToyApplied: { readonly factor: number };
  }
}

const TOY_OPTIONS: OptionsSchema<ToyStrategyOptions> = {
  name: option.string(),
  factor: option.number({ min: 1 }, 2),
  enabled: option.boolean(true),
};

class ToyStrategy implements ResilienceStrategy {
  constructor(
    private readonly options: ToyStrategyOptions,
    private readonly context: StrategyBuilderContext,
  ) {}

  async execute(next: StrategyNext<unknown>, context: ResilienceContext): Promise<unknown> {
    const result = await next(context);
    if (this.options.enabled === false || typeof result !== 'number') return result;
    const factor = this.options.factor ?? 2;
    this.context.telemetry.report('OnToyApplied', 'warning', context, { factor });
    return result * factor;
  }
}

/** The toy strategy: `addToy`, the `toy` section, `@Toy`. */
export const toyStrategy: StrategyDescriptor<ToyStrategyOptions, { toy: ToyConfig }> = defineStrategy({
  type: 'toy',
  options: TOY_OPTIONS,
  events: {
    OnToyApplied: {
      severity: 'warning',
      describe: (a) => [{ label: 'factor', attribute: 'toy.factor', value: a.factor }],
    },
  },
  create: (options, context) => new ToyStrategy(options, context),
  sections: { toy: section<ToyConfig>({ decorator: 'Toy', numberOption: 'factor' }) },
});
