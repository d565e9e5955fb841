import { rateLimiterStrategy, sharedLimit } from '../rate-limiter/rate-limiter.descriptor.js';
import type { RateLimiterStrategyOptions } from '../rate-limiter/rate-limiter.options.js';
import type { StrategyDescriptor } from '../strategy/resilience-strategy.interface.js';
import { defineStrategy, section } from '../strategy/strategy.descriptor.js';

/** Concurrent calls, or the limit with a queue (and the share `sheddable` calls may fill). @publicApi */
export type ConcurrencyLimiterConfig =
  number | { permitLimit: number; queueLimit?: number; sheddableRatio?: number; name?: string };

/**
 * The concurrency limiter (the bulkhead): `permitLimit` calls run, `queueLimit` wait in FIFO order. The
 * `concurrencyLimiter` section (a number is the permit limit) and `@ConcurrencyLimit`. It runs on the
 * rate limiter's engine with `kind: 'concurrency'`.
 *
 * @publicApi
 */
export const concurrencyLimiterStrategy: StrategyDescriptor<
  RateLimiterStrategyOptions,
  { concurrencyLimiter: ConcurrencyLimiterConfig }
> = defineStrategy({
  ...rateLimiterStrategy,
  type: 'concurrency-limiter',
  sections: {
    concurrencyLimiter: section<ConcurrencyLimiterConfig, RateLimiterStrategyOptions>({
      decorator: 'ConcurrencyLimit',
      numberOption: 'permitLimit',
      fromConfig: (config) => ({ ...config, kind: 'concurrency' }),
      create: sharedLimit('concurrencyLimiter'),
    }),
  },
});

/** @deprecated Use `concurrencyLimiterStrategy`. @publicApi */
export const concurrencyLimiterRegistration = concurrencyLimiterStrategy;
