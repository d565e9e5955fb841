import {
  StrategyServiceKey,
  type StrategyBuilderContext,
  type StrategyConfigEnvironment,
  type StrategyDefinition,
} from '../resilience-strategy.interface.js';
import type { RateLimiter } from './rate-limiter.model.js';
import { validateRateLimiterOptions, type RateLimiterStrategyOptions } from './rate-limiter.options.js';
import { RateLimiterStrategy } from './rate-limiter.strategy.js';

/** A limit section of configuration: its strategy shares one limiter per pipeline name and key. @publicApi */
export type SharedLimitSection = 'rateLimiter' | 'concurrencyLimiter';

/** Gives a limit section from configuration the limiter it shares with others. @publicApi */
export const SHARED_LIMITER_SERVICE = new StrategyServiceKey<
  (section: SharedLimitSection, options: RateLimiterStrategyOptions) => RateLimiter
>('shared-limiter');

/**
 * Creates the strategy of a limit section: the definition is validated as given; the limiter it
 * describes is shared when the environment can.
 *
 * @internal
 */
export function sharedLimit(section: SharedLimitSection) {
  return (options: RateLimiterStrategyOptions, context: StrategyBuilderContext, env: StrategyConfigEnvironment) => {
    const shared = env.service(SHARED_LIMITER_SERVICE);
    return new RateLimiterStrategy(
      shared && !options.limiter
        ? { name: options.name, onRejected: options.onRejected, limiter: shared(section, options) }
        : options,
      context,
    );
  };
}

/** The rate limiter: `addRateLimiter`, the `rateLimiter` section, `@RateLimit`. @publicApi */
export const rateLimiterRegistration: StrategyDefinition<RateLimiterStrategyOptions> = {
  type: 'rate-limiter',
  events: ['OnRateLimiterRejected'],
  validate: validateRateLimiterOptions,
  create: (options, context) => new RateLimiterStrategy(options, context),
  sections: {
    rateLimiter: { decorator: 'RateLimit', create: sharedLimit('rateLimiter') },
  },
};
