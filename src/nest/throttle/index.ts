export { ResilienceThrottleGuard } from './resilience-throttle.guard.js';
export { ResilienceThrottle, SkipResilienceThrottle } from './resilience-throttle.decorators.js';
export {
  DEFAULT_THROTTLE_LIMIT,
  ResilienceThrottler,
  type ResilienceThrottleDecision,
} from './resilience.throttler.js';
export type { ResilienceThrottleLimit, ResilienceThrottleOptions } from '../options/resilience-throttle.options.js';
