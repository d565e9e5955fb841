import './adaptive-concurrency.shortcuts.js';

export {
  adaptiveConcurrencyRegistration,
  adaptiveConcurrencyStrategy,
  type AdaptiveConcurrencyConfig,
} from './adaptive-concurrency.descriptor.js';
export { AdaptiveConcurrencyLimiter } from './adaptive-concurrency.limiter.js';
export {
  ADAPTIVE_CONCURRENCY_DEFAULTS,
  type AdaptiveConcurrencyAlgorithm,
  type AdaptiveConcurrencyOptions,
  type AdaptiveLimitChangedArguments,
  type OnAdaptiveConcurrencyRejectedArguments,
} from './adaptive-concurrency.options.js';
