import './concurrency-limiter.shortcuts.js';

export {
  concurrencyLimiterRegistration,
  concurrencyLimiterStrategy,
  type ConcurrencyLimiterConfig,
} from './concurrency-limiter.descriptor.js';
export type { ConcurrencyLimiterStrategyOptions } from './concurrency-limiter.shortcuts.js';
