import './hedging.shortcuts.js';

export {
  DEFAULT_HEDGING_DELAY,
  DEFAULT_MAX_HEDGED_ATTEMPTS,
  type HedgingActionGeneratorArguments,
  type HedgingDelayGeneratorArguments,
  type HedgingPredicateArguments,
  type HedgingStrategyOptions,
  type OnHedgingArguments,
} from './hedging.options.js';
export { hedgingRegistration, hedgingStrategy, type HedgingConfig } from './hedging.descriptor.js';
