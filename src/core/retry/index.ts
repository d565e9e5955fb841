import './retry.shortcuts.js';

export {
  type BackoffType,
  type OnRetryArguments,
  type RetryDelayGeneratorArguments,
  type RetryPredicateArguments,
  type RetryStrategyOptions,
} from './retry.options.js';
export { DEFAULT_RETRY_BACKOFF_TYPE, DEFAULT_RETRY_DELAY, DEFAULT_RETRY_MAX_ATTEMPTS } from './retry.constants.js';
export { clampDelay, computeBackoffDelay, type BackoffOptions, type BackoffState } from './backoff.helper.js';
export { RetryBudget, type RetryBudgetOptions } from './retry.budget.js';
export { retryRegistration, retryStrategy, type RetryConfig } from './retry.descriptor.js';
