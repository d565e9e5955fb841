import type { StrategyDefinition } from '../resilience-strategy.interface.js';
import { validateHedgingOptions, type HedgingStrategyOptions } from './hedging.options.js';
import { HedgingStrategy } from './hedging.strategy.js';

/** The hedging strategy: `addHedging`, the `hedging` section, `@Hedging`. @publicApi */
export const hedgingRegistration: StrategyDefinition<HedgingStrategyOptions<unknown>> = {
  type: 'hedging',
  events: ['ExecutionAttempt', 'OnHedging'],
  validate: validateHedgingOptions,
  create: (options, context) => new HedgingStrategy(options, context),
  sections: { hedging: { decorator: 'Hedging' } },
};
