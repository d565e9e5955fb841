import './rate-limiter.shortcuts.js';

export type {
  InspectableRateLimiter,
  LimiterSnapshot,
  RateLimiter,
  RateLimitLease,
} from './limiters/rate-limiter.model.js';
export { admittedLease, rejectedLease } from './limiters/rate-limiter.model.js';
export {
  createRateLimiter,
  DEFAULT_RATE_LIMIT,
  type OnRateLimiterRejectedArguments,
  type RateLimitDefinition,
  type RateLimiterStrategyOptions,
  type RateLimitKind,
} from './rate-limiter.options.js';
export { ConcurrencyLimiter, type ConcurrencyLimiterOptions } from './limiters/concurrency.limiter.js';
export { TokenBucketRateLimiter, type TokenBucketLimiterOptions } from './limiters/token-bucket.limiter.js';
export { FixedWindowRateLimiter, type FixedWindowLimiterOptions } from './limiters/fixed-window.limiter.js';
export { SlidingWindowRateLimiter, type SlidingWindowLimiterOptions } from './limiters/sliding-window.limiter.js';
export { ChainedRateLimiter, PartitionedRateLimiter } from './limiters/composite.limiters.js';
export {
  rateLimiterRegistration,
  rateLimiterStrategy,
  SHARED_LIMITER_SERVICE,
  type RateLimiterConfig,
  type SharedLimitSection,
  type SharedLimitSectionName,
} from './rate-limiter.descriptor.js';
