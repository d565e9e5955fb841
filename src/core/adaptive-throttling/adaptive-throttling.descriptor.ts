import type { PredicateReference } from '../outcome.predicates.js';
import type { StrategyDescriptor } from '../resilience-strategy.interface.js';
import { defineStrategy, section } from '../strategy/strategy.descriptor.js';
import { ADAPTIVE_THROTTLING_OPTIONS, type AdaptiveThrottlingStrategyOptions } from './adaptive-throttling.options.js';
import { AdaptiveThrottlingStrategy } from './adaptive-throttling.strategy.js';

/**
 * The `adaptiveThrottling` section: `AdaptiveThrottlingStrategyOptions` with `shouldHandle` as a
 * predicate reference (the state provider is for code).
 *
 * @publicApi
 */
export type AdaptiveThrottlingConfig = Omit<
  AdaptiveThrottlingStrategyOptions<unknown>,
  'shouldHandle' | 'stateProvider'
> & {
  shouldHandle?: PredicateReference;
};

/**
 * Client-side adaptive throttling: `addAdaptiveThrottling`, the `adaptiveThrottling` section and
 * `@AdaptiveThrottling`. One strategy — one window of counts — per pipeline instance; inspection reads
 * it through its `throttle` port.
 *
 * @publicApi
 */
export const adaptiveThrottlingStrategy: StrategyDescriptor<
  AdaptiveThrottlingStrategyOptions<unknown>,
  { adaptiveThrottling: AdaptiveThrottlingConfig }
> = defineStrategy({
  type: 'adaptive-throttling',
  options: ADAPTIVE_THROTTLING_OPTIONS,
  events: {
    OnAdaptiveThrottlingRejected: {
      severity: 'warning',
      logAs: 'debug',
      changesState: true,
      describe: (a) => [
        { label: 'rejectProbability', value: a.rejectProbability.toFixed(3) },
        { attribute: 'throttle.reject_probability', value: a.rejectProbability },
        { label: 'accepts', value: `${a.accepts}/${a.requests}` },
      ],
    },
  },
  create: (options, context) => new AdaptiveThrottlingStrategy(options, context),
  ports: ['throttle'],
  sections: { adaptiveThrottling: section<AdaptiveThrottlingConfig>({ decorator: 'AdaptiveThrottling' }) },
});

/** @deprecated Use `adaptiveThrottlingStrategy`. @publicApi */
export const adaptiveThrottlingRegistration = adaptiveThrottlingStrategy;
