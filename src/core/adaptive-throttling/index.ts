import './adaptive-throttling.shortcuts.js';

export { AdaptiveThrottlingRejectedError, isAdaptiveThrottlingRejectedError } from './adaptive-throttling.errors.js';
export {
  DEFAULT_ADAPTIVE_THROTTLING_K,
  DEFAULT_ADAPTIVE_THROTTLING_WINDOW,
  type AdaptiveThrottlingPredicateArguments,
  type AdaptiveThrottlingStrategyOptions,
  type OnThrottledArguments,
} from './adaptive-throttling.options.js';
export { handleOverloadRejection, isOverloadRejection } from './adaptive-throttling.predicates.js';
export {
  adaptiveThrottlingRegistration,
  adaptiveThrottlingStrategy,
  type AdaptiveThrottlingConfig,
} from './adaptive-throttling.descriptor.js';
export {
  AdaptiveThrottlingStateProvider,
  type AdaptiveThrottlingPort,
  type AdaptiveThrottlingStatistics,
} from './adaptive-throttling.state-provider.js';
export { adaptiveThrottlingRejectProbability } from './adaptive-throttling.strategy.js';
