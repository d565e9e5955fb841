import type { StrategyDefinition } from '../resilience-strategy.interface.js';
import { validateFallbackOptions, type FallbackStrategyOptions } from './fallback.options.js';
import { FallbackStrategy } from './fallback.strategy.js';

/** The fallback strategy: `addFallback`, the `fallback` section, `@Fallback`. @publicApi */
export const fallbackRegistration: StrategyDefinition<FallbackStrategyOptions<unknown>> = {
  type: 'fallback',
  events: ['OnFallback'],
  validate: validateFallbackOptions,
  create: (options, context) => new FallbackStrategy(options, context),
  sections: { fallback: { decorator: 'Fallback' } },
};
