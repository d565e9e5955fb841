import type { ResilienceContext } from '../context/resilience.context.js';
import type { Outcome } from '../outcome.model.js';
import { isGiven, type OptionsValidator } from '../utils/options.validation.js';
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

/** @internal */
export const FALLBACK_OPTION_KEYS = ['name', 'fallbackValue', 'fallbackAction', 'shouldHandle', 'onFallback'] as const;

/** @internal */
export function validateFallbackOptions(v: OptionsValidator, options: FallbackStrategyOptions<unknown>): void {
  v.knownKeys(options, FALLBACK_OPTION_KEYS)
    .string('name', options.name)
    .func('fallbackAction', options.fallbackAction)
    .func('shouldHandle', options.shouldHandle)
    .func('onFallback', options.onFallback);
  const hasValue = isGiven(options, 'fallbackValue');
  const hasAction = isGiven(options, 'fallbackAction');
  if (!hasValue && !hasAction) {
    v.add('fallbackAction', undefined, RULES.requiredOr('fallbackValue'));
  } else if (hasValue && hasAction) {
    v.add('fallbackValue', options.fallbackValue, RULES.notWith('fallbackAction'));
  }
}
