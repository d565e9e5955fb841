import { rateLimiterRegistration, sharedLimit } from '../rate-limiter/rate-limiter.registration.js';
import type { RateLimiterStrategyOptions } from '../rate-limiter/rate-limiter.options.js';
import type { StrategyDefinition } from '../resilience-strategy.interface.js';

/**
 * The concurrency limiter (the bulkhead): `permitLimit` calls run, `queueLimit` wait in FIFO order. The
 * `concurrencyLimiter` section (a number is the permit limit) and `@ConcurrencyLimit`. It runs on the
 * rate limiter's engine with `kind: 'concurrency'`.
 *
 * @publicApi
 */
export const concurrencyLimiterRegistration: StrategyDefinition<RateLimiterStrategyOptions> = {
  ...rateLimiterRegistration,
  type: 'concurrency-limiter',
  sections: {
    concurrencyLimiter: {
      decorator: 'ConcurrencyLimit',
      numberOption: 'permitLimit',
      fromConfig: (config) => ({ ...config, kind: 'concurrency' }),
      create: sharedLimit('concurrencyLimiter'),
    },
  },
};
