import type { StrategyDefinition } from '../resilience-strategy.interface.js';
import { validateRetryOptions, type RetryStrategyOptions } from './retry.options.js';
import { RetryStrategy } from './retry.strategy.js';

/** The retry strategy: `addRetry`, the `retry` section, `@Retry`. @publicApi */
export const retryRegistration: StrategyDefinition<RetryStrategyOptions<unknown>> = {
  type: 'retry',
  events: ['ExecutionAttempt', 'OnRetry', 'OnRetryGiveUp'],
  validate: (v, options) => validateRetryOptions(v, options),
  create: (options, context) => new RetryStrategy(options, context),
  sections: { retry: { decorator: 'Retry' } },
};
