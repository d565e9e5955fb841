export { adaptiveConcurrencyRegistration } from './adaptive-concurrency.registration.js';
export { AdaptiveConcurrencyLimiter } from './adaptive-concurrency.limiter.js';
export {
  ADAPTIVE_CONCURRENCY_DEFAULTS,
  type AdaptiveConcurrencyAlgorithm,
  type AdaptiveConcurrencyOptions,
  type AdaptiveLimitChangedArguments,
  type OnAdaptiveConcurrencyRejectedArguments,
} from './adaptive-concurrency.options.js';
