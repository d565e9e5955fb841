import type { StrategyDefinition } from '../resilience-strategy.interface.js';
import { validateTimeoutOptions, type TimeoutStrategyOptions } from './timeout.options.js';
import { TimeoutStrategy } from './timeout.strategy.js';

/**
 * The timeout strategy: `addTimeout`, the `timeout` section (per attempt, `@Timeout`) and the
 * `totalTimeout` section (around everything inside it). A number given for either is the timeout.
 *
 * @publicApi
 */
export const timeoutRegistration: StrategyDefinition<TimeoutStrategyOptions> = {
  type: 'timeout',
  events: ['OnTimeout'],
  validate: validateTimeoutOptions,
  create: (options, context) => new TimeoutStrategy(options, context),
  sections: {
    totalTimeout: { numberOption: 'timeout', listed: false },
    timeout: { decorator: 'Timeout', numberOption: 'timeout' },
  },
};
