import type { PredicateReference } from '../outcome/outcome.predicates.js';
import type { StrategyDescriptor } from '../strategy/resilience-strategy.interface.js';
import { defineStrategy, section } from '../strategy/strategy.descriptor.js';
import { EXECUTION_ATTEMPT_EVENT } from '../telemetry/event.catalog.js';
import { HEDGING_OPTIONS, type HedgingStrategyOptions } from './hedging.options.js';
import { HedgingStrategy } from './hedging.strategy.js';

/** The `hedging` section: `HedgingStrategyOptions` with `shouldHandle` as a predicate reference. @publicApi */
export type HedgingConfig = Omit<HedgingStrategyOptions<unknown>, 'shouldHandle'> & {
  shouldHandle?: PredicateReference;
};

/** The hedging strategy: `addHedging`, the `hedging` section, `@Hedging`. @publicApi */
export const hedgingStrategy: StrategyDescriptor<
  HedgingStrategyOptions<unknown>,
  { hedging: HedgingConfig }
> = defineStrategy({
  type: 'hedging',
  options: HEDGING_OPTIONS,
  events: {
    ExecutionAttempt: EXECUTION_ATTEMPT_EVENT,
    OnHedging: {
      severity: 'warning',
      logAs: 'debug',
      describe: (a) => [{ label: 'attempt', attribute: 'attempt.number', value: a.attemptNumber }],
    },
  },
  create: (options, context) => new HedgingStrategy(options, context),
  sections: { hedging: section<HedgingConfig>({ decorator: 'Hedging' }) },
});

/** @deprecated Use `hedgingStrategy`. @publicApi */
export const hedgingRegistration = hedgingStrategy;
