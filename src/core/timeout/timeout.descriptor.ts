import type { StrategyDescriptor } from '../strategy/resilience-strategy.interface.js';
import { defineStrategy, section } from '../strategy/strategy.descriptor.js';
import { TIMEOUT_OPTIONS, type TimeoutStrategyOptions } from './timeout.options.js';
import { TimeoutStrategy } from './timeout.strategy.js';

/** The `timeout` and `totalTimeout` sections: milliseconds, or `TimeoutStrategyOptions`. @publicApi */
export type TimeoutConfig = number | TimeoutStrategyOptions;

/**
 * The timeout strategy: `addTimeout`, the `timeout` section (per attempt, `@AttemptTimeout`) and the
 * `totalTimeout` section (around everything inside it). A number given for either is the timeout.
 *
 * @publicApi
 */
export const timeoutStrategy: StrategyDescriptor<
  TimeoutStrategyOptions,
  { totalTimeout: TimeoutConfig; timeout: TimeoutConfig }
> = defineStrategy({
  type: 'timeout',
  options: TIMEOUT_OPTIONS,
  events: {
    OnTimeout: {
      severity: 'error',
      logAs: 'warning',
      describe: (a) => [{ label: 'timeout', attribute: 'timeout.duration', value: a.timeout, unit: 'ms' }],
    },
  },
  create: (options, context) => new TimeoutStrategy(options, context),
  sections: {
    totalTimeout: section<TimeoutConfig>({ numberOption: 'timeout', listed: false }),
    timeout: section<TimeoutConfig>({ decorator: 'AttemptTimeout', numberOption: 'timeout' }),
  },
});

/** @deprecated Use `timeoutStrategy`. @publicApi */
export const timeoutRegistration = timeoutStrategy;
