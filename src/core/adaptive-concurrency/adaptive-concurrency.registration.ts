import type { StrategyDefinition } from '../resilience-strategy.interface.js';
import { validateAdaptiveConcurrencyOptions, type AdaptiveConcurrencyOptions } from './adaptive-concurrency.options.js';
import { AdaptiveConcurrencyStrategy } from './adaptive-concurrency.strategy.js';

/**
 * The adaptive concurrency limiter: `addAdaptiveConcurrencyLimiter`, the `adaptiveConcurrency` section
 * (a number is the initial limit) and `@AdaptiveConcurrencyLimit`.
 *
 * @publicApi
 */
export const adaptiveConcurrencyRegistration: StrategyDefinition<AdaptiveConcurrencyOptions> = {
  type: 'adaptive-concurrency',
  events: ['OnAdaptiveLimitChanged', 'OnRateLimiterRejected'],
  validate: validateAdaptiveConcurrencyOptions,
  create: (options, context) => new AdaptiveConcurrencyStrategy(options, context),
  sections: {
    adaptiveConcurrency: { decorator: 'AdaptiveConcurrencyLimit', numberOption: 'initialLimit' },
  },
};
