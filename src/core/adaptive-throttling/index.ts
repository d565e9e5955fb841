import './adaptive-throttling.shortcuts.js';

export { AdaptiveThrottlingRejectedError, isAdaptiveThrottlingRejectedError } from './adaptive-throttling.errors.js';
export {
  DEFAULT_ADAPTIVE_THROTTLING_K,
  DEFAULT_ADAPTIVE_THROTTLING_WINDOW,
  type AdaptiveThrottlingFleetOptions,
  type AdaptiveThrottlingPredicateArguments,
  type AdaptiveThrottlingStrategyOptions,
  type OnThrottledArguments,
} from './adaptive-throttling.options.js';
export { handleOverloadRejection, isOverloadRejection } from './adaptive-throttling.predicates.js';
export {
  ADAPTIVE_THROTTLING_STORE_SERVICE,
  adaptiveThrottlingRegistration,
  adaptiveThrottlingStrategy,
  type AdaptiveThrottlingConfig,
} from './adaptive-throttling.descriptor.js';
export {
  AdaptiveThrottlingStateProvider,
  type AdaptiveThrottlingPort,
  type AdaptiveThrottlingStatistics,
} from './adaptive-throttling.state-provider.js';
export {
  InMemoryAdaptiveThrottlingStore,
  type AdaptiveThrottlingBucketCounts,
  type AdaptiveThrottlingStore,
  type AdaptiveThrottlingSyncRequest,
} from './adaptive-throttling.store.js';
export { adaptiveThrottlingRejectProbability, defaultAdaptiveThrottlingKey } from './adaptive-throttling.strategy.js';
