import { rateLimiterStrategy } from '../rate-limiter/rate-limiter.descriptor.js';
import type { StrategyDescriptor } from '../strategy/resilience-strategy.interface.js';
import { defineStrategy, section } from '../strategy/strategy.descriptor.js';
import {
  ADAPTIVE_CONCURRENCY_OPTIONS,
  checkAdaptiveConcurrencyOptions,
  type AdaptiveConcurrencyOptions,
} from './adaptive-concurrency.options.js';
import { AdaptiveConcurrencyStrategy } from './adaptive-concurrency.strategy.js';

/** The `adaptiveConcurrency` section: an initial limit, or `AdaptiveConcurrencyOptions` without the callbacks. @publicApi */
export type AdaptiveConcurrencyConfig =
  number | Omit<AdaptiveConcurrencyOptions, 'isDropped' | 'onRejected' | 'onLimitChanged'>;

/**
 * The adaptive concurrency limiter: `addAdaptiveConcurrencyLimiter`, the `adaptiveConcurrency` section
 * (a number is the initial limit) and `@AdaptiveConcurrencyLimit`. One limiter per pipeline instance;
 * inspection reads it through its `limiter` port.
 *
 * @publicApi
 */
export const adaptiveConcurrencyStrategy: StrategyDescriptor<
  AdaptiveConcurrencyOptions,
  { adaptiveConcurrency: AdaptiveConcurrencyConfig }
> = defineStrategy({
  type: 'adaptive-concurrency',
  options: ADAPTIVE_CONCURRENCY_OPTIONS,
  check: checkAdaptiveConcurrencyOptions,
  events: {
    OnAdaptiveLimitChanged: {
      severity: 'information',
      logAs: 'debug',
      changesState: true,
      describe: (a) => [
        { label: 'limit', attribute: 'concurrency.limit', value: a.limit },
        { label: 'previousLimit', attribute: 'concurrency.previous_limit', value: a.previousLimit },
      ],
    },
    OnRateLimiterRejected: rateLimiterStrategy.eventDescriptors?.OnRateLimiterRejected,
  },
  create: (options, context) => new AdaptiveConcurrencyStrategy(options, context),
  ports: ['limiter'],
  sections: {
    adaptiveConcurrency: section<AdaptiveConcurrencyConfig>({
      decorator: 'AdaptiveConcurrencyLimit',
      numberOption: 'initialLimit',
    }),
  },
});

/** @deprecated Use `adaptiveConcurrencyStrategy`. @publicApi */
export const adaptiveConcurrencyRegistration = adaptiveConcurrencyStrategy;
