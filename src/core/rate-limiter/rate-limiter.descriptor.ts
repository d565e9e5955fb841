import {
  StrategyServiceKey,
  type StrategyBuilderContext,
  type StrategyConfigEnvironment,
  type StrategyDescriptor,
} from '../strategy/resilience-strategy.interface.js';
import { defineStrategy, section } from '../strategy/strategy.descriptor.js';
import { RULES } from '../resilience.messages.js';
import type { OptionsValidator } from '../strategy/options.validation.js';
import type { RateLimiter } from './limiters/rate-limiter.model.js';
import {
  checkRateLimiterOptions,
  RATE_LIMITER_OPTIONS,
  type RateLimiterStrategyOptions,
} from './rate-limiter.options.js';
import { RateLimiterStrategy } from './rate-limiter.strategy.js';

/** The name of a limit section of configuration: its strategy shares one limiter per pipeline name and key. @publicApi */
export type SharedLimitSectionName = 'rateLimiter' | 'concurrencyLimiter';

/** @deprecated Use `SharedLimitSectionName`. @publicApi */
export type SharedLimitSection = SharedLimitSectionName;

/** Gives a limit section from configuration the limiter it shares with others. @publicApi */
export const SHARED_LIMITER_SERVICE = new StrategyServiceKey<
  (section: SharedLimitSectionName, options: RateLimiterStrategyOptions) => RateLimiter
>('shared-limiter');

/** Present (true) where limits marked `distributed` have a store to share them in. @internal */
export const DISTRIBUTED_LIMITS_SERVICE = new StrategyServiceKey<boolean>('distributed-limits');

/**
 * Refuses a limit marked `distributed` where no store can share it: at start-up, with its path.
 *
 * @internal
 */
export function validateDistributedLimit(
  v: OptionsValidator,
  options: RateLimiterStrategyOptions,
  env: StrategyConfigEnvironment,
): void {
  if (options.distributed === true && env.service(DISTRIBUTED_LIMITS_SERVICE) !== true) {
    v.add('distributed', options.distributed, RULES.distributedNeedsStore);
  }
}

/**
 * Creates the strategy of a limit section: the definition is validated as given; the limiter it
 * describes is shared when the environment can.
 *
 * @internal
 */
export function sharedLimit(section: SharedLimitSectionName) {
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

/** The `rateLimiter` section: `RateLimiterStrategyOptions`. @publicApi */
export type RateLimiterConfig = RateLimiterStrategyOptions;

/**
 * The rate limiter: `addRateLimiter`, the `rateLimiter` section, `@RateLimit`. Inspection reads it
 * through its `limiter` port.
 *
 * @publicApi
 */
export const rateLimiterStrategy: StrategyDescriptor<RateLimiterStrategyOptions, { rateLimiter: RateLimiterConfig }> =
  defineStrategy({
    type: 'rate-limiter',
    options: RATE_LIMITER_OPTIONS,
    check: checkRateLimiterOptions,
    events: {
      OnRateLimiterRejected: {
        severity: 'error',
        logAs: 'debug',
        changesState: true,
        describe: (a) => [
          // Log lines name the reason only when the call was shed; metrics carry it whenever it is known.
          ...(a.reason === undefined
            ? []
            : [
                {
                  label: a.reason === 'shed' ? 'reason' : undefined,
                  attribute: 'rate_limiter.reason',
                  value: a.reason,
                },
              ]),
          ...(a.retryAfter === undefined
            ? []
            : [{ label: 'retryAfter', attribute: 'retry.after', value: a.retryAfter, unit: 'ms' as const }]),
        ],
      },
    },
    create: (options, context) => new RateLimiterStrategy(options, context),
    ports: ['limiter'],
    sections: {
      rateLimiter: section<RateLimiterConfig, RateLimiterStrategyOptions>({
        decorator: 'RateLimit',
        validate: validateDistributedLimit,
        create: sharedLimit('rateLimiter'),
      }),
    },
  });

/** @deprecated Use `rateLimiterStrategy`. @publicApi */
export const rateLimiterRegistration = rateLimiterStrategy;
