import type { PredicateReference } from '../outcome/outcome.predicates.js';
import type { StrategyDescriptor } from '../strategy/resilience-strategy.interface.js';
import { defineStrategy, section } from '../strategy/strategy.descriptor.js';
import { checkFallbackOptions, FALLBACK_OPTIONS, type FallbackStrategyOptions } from './fallback.options.js';
import { FallbackStrategy } from './fallback.strategy.js';

/** The `fallback` section: `FallbackStrategyOptions` with `shouldHandle` as a predicate reference. @publicApi */
export type FallbackConfig = Omit<FallbackStrategyOptions<unknown>, 'shouldHandle'> & {
  shouldHandle?: PredicateReference;
};

/** The fallback strategy: `addFallback`, the `fallback` section, `@Fallback`. @publicApi */
export const fallbackStrategy: StrategyDescriptor<
  FallbackStrategyOptions<unknown>,
  { fallback: FallbackConfig }
> = defineStrategy({
  type: 'fallback',
  options: FALLBACK_OPTIONS,
  check: checkFallbackOptions,
  events: { OnFallback: { severity: 'warning' } },
  create: (options, context) => new FallbackStrategy(options, context),
  sections: { fallback: section<FallbackConfig>({ decorator: 'Fallback' }) },
});

/** @deprecated Use `fallbackStrategy`. @publicApi */
export const fallbackRegistration = fallbackStrategy;
