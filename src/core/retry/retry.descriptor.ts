import type { PredicateReference } from '../outcome/outcome.predicates.js';
import type { StrategyDescriptor } from '../strategy/resilience-strategy.interface.js';
import { defineStrategy, section } from '../strategy/strategy.descriptor.js';
import { EXECUTION_ATTEMPT_EVENT } from '../telemetry/event.catalog.js';
import { checkRetryOptions, RETRY_OPTIONS, type RetryStrategyOptions } from './retry.options.js';
import { RetryStrategy } from './retry.strategy.js';

/** The `retry` section of a pipeline configuration: `RetryStrategyOptions` with `shouldHandle` as a predicate reference. @publicApi */
export type RetryConfig = Omit<RetryStrategyOptions<unknown>, 'shouldHandle'> & { shouldHandle?: PredicateReference };

/** The retry strategy: `addRetry`, the `retry` section, `@Retry`. @publicApi */
export const retryStrategy: StrategyDescriptor<RetryStrategyOptions<unknown>, { retry: RetryConfig }> = defineStrategy({
  type: 'retry',
  options: RETRY_OPTIONS,
  check: checkRetryOptions,
  events: {
    ExecutionAttempt: EXECUTION_ATTEMPT_EVENT,
    OnRetry: {
      severity: 'warning',
      describe: (a) => [
        { label: 'attempt', attribute: 'attempt.number', value: a.attemptNumber },
        { label: 'delay', attribute: 'retry.delay', value: a.retryDelay, unit: 'ms' },
      ],
    },
    OnRetryGiveUp: {
      severity: 'error',
      describe: (a) => [
        { label: 'attempt', attribute: 'attempt.number', value: a.attemptNumber },
        { label: 'reason', attribute: 'retry.give_up.reason', value: a.reason },
      ],
    },
  },
  create: (options, context) => new RetryStrategy(options, context),
  sections: { retry: section<RetryConfig>({ decorator: 'Retry' }) },
});

/** @deprecated Use `retryStrategy`. @publicApi */
export const retryRegistration = retryStrategy;
