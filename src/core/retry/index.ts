export * from './retry.options.js';
export * from './retry.constants.js';
export * from './backoff.helper.js';
export { RetryBudget, type RetryBudgetOptions } from './retry.budget.js';
