import type { StrategyDefinition } from '../resilience-strategy.interface.js';
import {
  validateAdaptiveThrottlingOptions,
  type AdaptiveThrottlingStrategyOptions,
} from './adaptive-throttling.options.js';
import { AdaptiveThrottlingStrategy } from './adaptive-throttling.strategy.js';

/** Reads a number that configuration gave as a string (`"1.5"`); anything else is left for validation. */
function numberFromConfig(value: unknown): unknown {
  if (typeof value !== 'string' || value.trim() === '') return value;
  const n = Number(value);
  return Number.isNaN(n) ? value : n;
}

/**
 * Client-side adaptive throttling: `addAdaptiveThrottling`, the `adaptiveThrottling` section and
 * `@AdaptiveThrottling`. One strategy — one window of counts — per pipeline instance.
 *
 * @publicApi
 */
export const adaptiveThrottlingRegistration: StrategyDefinition<AdaptiveThrottlingStrategyOptions<unknown>> = {
  type: 'adaptive-throttling',
  events: ['OnAdaptiveThrottlingRejected'],
  validate: (v, options) => validateAdaptiveThrottlingOptions(v, options),
  create: (options, context) => new AdaptiveThrottlingStrategy(options, context),
  sections: {
    adaptiveThrottling: {
      decorator: 'AdaptiveThrottling',
      fromConfig: (config) => {
        const options = { ...config };
        if ('k' in options) options.k = numberFromConfig(options.k);
        if ('maxRejectProbability' in options) {
          options.maxRejectProbability = numberFromConfig(options.maxRejectProbability);
        }
        return options;
      },
    },
  },
};
