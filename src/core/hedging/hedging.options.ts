import type { ResilienceContext } from '../context/resilience.context.js';
import type { Outcome } from '../outcome/outcome.model.js';
import type { StrategyNext } from '../strategy/resilience-strategy.interface.js';
import { option, optionKeys, type OptionsSchema } from '../strategy/options.schema.js';
import { MAX_TIMER_DELAY } from '../strategy/options.validation.js';

/** What `shouldHandle` of the hedging strategy receives for each attempt's outcome. @publicApi */
export interface HedgingPredicateArguments<T> {
  /** The outcome of one attempt. */
  readonly outcome: Outcome<T>;
  /** The context of the attempt that produced the outcome. */
  readonly context: ResilienceContext;
}

/** What `delayGenerator` receives before each hedged attempt. @publicApi */
export interface HedgingDelayGeneratorArguments {
  /** The caller's context. */
  readonly context: ResilienceContext;
  /** The hedged attempt about to be waited for (1 for the first hedge). */
  readonly attemptNumber: number;
}

/** What `actionGenerator` receives to produce a hedged attempt. @publicApi */
export interface HedgingActionGeneratorArguments<T> {
  /** The caller's context. */
  readonly primaryContext: ResilienceContext;
  /** The context the hedged action will run with (a copy, with its own signal). */
  readonly actionContext: ResilienceContext;
  /** The hedged attempt to produce (1 for the first hedge). */
  readonly attemptNumber: number;
  /** The original callback (with the strategies inside hedging). */
  readonly callback: StrategyNext<T>;
}

/** What `onHedging` receives when a hedged attempt starts. @publicApi */
export interface OnHedgingArguments {
  /** The caller's context. */
  readonly primaryContext: ResilienceContext;
  /** The context the hedged attempt runs with. */
  readonly actionContext: ResilienceContext;
  /** The hedged attempt starting (1 for the first hedge). */
  readonly attemptNumber: number;
}

/** Options of `addHedging` (and the `hedging` section of a pipeline configuration). @publicApi */
export interface HedgingStrategyOptions<T = unknown> {
  /** Names the strategy in telemetry and validation messages. */
  name?: string;
  /** Hedged attempts besides the primary one, 1 … 10. Default 1. */
  maxHedgedAttempts?: number;
  /**
   * How long to wait for an attempt before starting the next. `> 0` latency mode; `0` parallel mode
   * (all at once); any negative value is fallback mode (the next starts only after the previous failed),
   * as Polly's `Timeout.InfiniteTimeSpan`. A finite number up to the largest timer delay. Default 2000.
   */
  delay?: number;
  /** Computes the delay per hedged attempt instead. */
  delayGenerator?: (args: HedgingDelayGeneratorArguments) => number | PromiseLike<number>;
  /** What a hedged attempt runs. Default: the original callback. Returning `undefined` stops hedging. */
  actionGenerator?: (
    args: HedgingActionGeneratorArguments<T>,
  ) => ((context: ResilienceContext) => T | PromiseLike<T>) | undefined;
  /** Which outcomes are not accepted (a hedge may replace them). Default: every error except cancellation. */
  shouldHandle?: (args: HedgingPredicateArguments<T>) => boolean | PromiseLike<boolean>;
  /** Runs when a hedged attempt starts. */
  onHedging?: (args: OnHedgingArguments) => void | PromiseLike<void>;
}

/** Polly's defaults. @publicApi */
export const DEFAULT_HEDGING_DELAY = 2_000;
/** Hedged attempts besides the primary one by default (Polly v8: one). @publicApi */
export const DEFAULT_MAX_HEDGED_ATTEMPTS = 1;

/** Every option of the hedging strategy. `delay` reads like a duration in configuration, negative included. @internal */
export const HEDGING_OPTIONS: OptionsSchema<HedgingStrategyOptions> = {
  name: option.string(),
  maxHedgedAttempts: option.number({ min: 1, max: 10, integer: true }, DEFAULT_MAX_HEDGED_ATTEMPTS),
  delay: option.custom({
    kind: 'duration',
    default: DEFAULT_HEDGING_DELAY,
    check: (v, key, value) => v.number(key, value, { max: MAX_TIMER_DELAY }),
  }),
  delayGenerator: option.func(),
  actionGenerator: option.func(),
  shouldHandle: option.func(),
  onHedging: option.func(),
};

/** The options `addHedging` accepts. @internal */
export const HEDGING_OPTION_KEYS = optionKeys(HEDGING_OPTIONS);
