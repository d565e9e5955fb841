import type { ResilienceContext } from '../context/resilience.context.js';
import type { Outcome } from '../outcome/outcome.model.js';
import { option, optionKeys, type OptionsSchema } from '../strategy/options.schema.js';
import { isGiven, type OptionsValidator } from '../strategy/options.validation.js';
import { RULES } from '../resilience.messages.js';

/** What `fallbackAction` and `onFallback` receive: the handled outcome and the call's context. @publicApi */
export interface FallbackArguments<T> {
  /** The handled outcome that is being replaced. */
  readonly outcome: Outcome<T>;
  /** The call's context. */
  readonly context: ResilienceContext;
}

/** Options of `addFallback` (and the `fallback` section of a pipeline configuration). @publicApi */
export interface FallbackStrategyOptions<T = unknown> {
  /** Names the strategy in telemetry and validation messages. */
  name?: string;
  /**
   * The value returned instead of a handled outcome. Give this or `fallbackAction`. `undefined` means
   * "not given" (as for every option); to fall back to `undefined`, use `fallbackAction: () => undefined`.
   */
  fallbackValue?: T;
  /** Produces the replacement; it may throw (the pipeline then fails with that error). */
  fallbackAction?: (args: FallbackArguments<T>) => T | PromiseLike<T>;
  /** Which outcomes are replaced. Default: every error except cancellation. */
  shouldHandle?: (args: FallbackArguments<T>) => boolean | PromiseLike<boolean>;
  /** Runs before the fallback produces its replacement. */
  onFallback?: (args: FallbackArguments<T>) => void | PromiseLike<void>;
}

/** Every option of the fallback strategy. @internal */
export const FALLBACK_OPTIONS: OptionsSchema<FallbackStrategyOptions> = {
  name: option.string(),
  fallbackValue: option.data(),
  fallbackAction: option.func(),
  shouldHandle: option.func(),
  onFallback: option.func(),
};

/** @internal */
export const FALLBACK_OPTION_KEYS = optionKeys(FALLBACK_OPTIONS);

/** What the schema cannot check: exactly one of `fallbackValue` and `fallbackAction`. @internal */
export function checkFallbackOptions(v: OptionsValidator, options: FallbackStrategyOptions<unknown>): void {
  const hasValue = isGiven(options, 'fallbackValue');
  const hasAction = isGiven(options, 'fallbackAction');
  if (!hasValue && !hasAction) {
    v.add('fallbackAction', undefined, RULES.requiredOr('fallbackValue'));
  } else if (hasValue && hasAction) {
    v.add('fallbackValue', options.fallbackValue, RULES.notWith('fallbackAction'));
  }
}
