import type { OptionsValidator } from '../strategy/options.validation.js';
import { option, optionKeys, type OptionsSchema } from '../strategy/options.schema.js';
import {
  RETRY_BUDGET_OPTIONS,
  validateRetryBudget,
  type RetryBudget,
  type RetryBudgetOptions,
} from './retry.budget.js';
import { DEFAULT_RETRY_BACKOFF_TYPE, DEFAULT_RETRY_DELAY, DEFAULT_RETRY_MAX_ATTEMPTS } from './retry.constants.js';
import type { ResilienceContext } from '../context/resilience.context.js';
import type { Outcome } from '../outcome/outcome.model.js';
import { RULES } from '../resilience.messages.js';

/** How the delay grows from one retry to the next. @publicApi */
export type BackoffType = 'constant' | 'linear' | 'exponential';

/** What `shouldHandle` of a retry strategy receives for each attempt's outcome. @publicApi */
export interface RetryPredicateArguments<T> {
  /** The outcome of the attempt. */
  readonly outcome: Outcome<T>;
  /** The call's context. */
  readonly context: ResilienceContext;
  /** The attempt that produced the outcome: 0 for the original call. */
  readonly attemptNumber: number;
}

/** What `delayGenerator` receives before each retry (the same as `shouldHandle`). @publicApi */
export type RetryDelayGeneratorArguments<T> = RetryPredicateArguments<T>;

/** What `onRetry` receives before waiting for the next attempt. @publicApi */
export interface OnRetryArguments<T> extends RetryPredicateArguments<T> {
  /** How long the next retry waits, in milliseconds. */
  readonly retryDelay: number;
  /** How long the failed attempt took, in milliseconds. */
  readonly duration: number;
}

/** Options of `addRetry` (and the `retry` section of a pipeline configuration). @publicApi */
export interface RetryStrategyOptions<T = unknown> {
  /** Names the strategy in telemetry and validation messages. */
  name?: string;
  /**
   * Retries after the original call; the original call is not counted (3 → at most 4 calls).
   * `Infinity` retries until success or cancellation. Default 3.
   */
  maxRetryAttempts?: number;
  /** Base delay in milliseconds. Default 2000. */
  delay?: number;
  /** `constant` (default): `delay`; `linear`: `delay × (attempt + 1)`; `exponential`: `delay × 2^attempt`. */
  backoffType?: BackoffType;
  /**
   * Adds randomness so many clients do not retry in step: ±25 % for constant and linear; decorrelated
   * jitter (V2) for exponential. Default false.
   */
  useJitter?: boolean;
  /** Caps the computed delay and any `retryAfter`, in milliseconds. No cap by default. */
  maxDelay?: number;
  /**
   * Computes the delay of one retry. A finite non-negative result is used as is (not capped by
   * `maxDelay`); `undefined` or a negative number falls back to the computed backoff.
   */
  delayGenerator?: (args: RetryDelayGeneratorArguments<T>) => number | undefined | PromiseLike<number | undefined>;
  /** Which outcomes are retried. Default: every error except cancellation; results are not retried. */
  shouldHandle?: (args: RetryPredicateArguments<T>) => boolean | PromiseLike<boolean>;
  /** Runs before each retry's wait. */
  onRetry?: (args: OnRetryArguments<T>) => void | PromiseLike<void>;
  /**
   * Retry when an inner circuit breaker rejects the call (`BrokenCircuitError`, `IsolatedCircuitError`).
   * Off by default: an open circuit means the fault is not transient, so the retry loop ends at once.
   * When on, the breaker's `retryAfter` is honoured.
   */
  retryOnBrokenCircuit?: boolean;
  /**
   * Wait as long as a `retryAfter` says (an error's `retryAfter` property in milliseconds, or what
   * `retryAfter` below extracts), capped by `maxDelay`. Default true.
   */
  honorRetryAfter?: boolean;
  /**
   * Extracts a server-given wait (milliseconds) from an outcome, e.g. an HTTP `Retry-After` header.
   * Default: the `retryAfter` property of the error, when it is a finite non-negative number.
   */
  retryAfter?: (args: RetryPredicateArguments<T>) => number | undefined;
  /** Random source for jitter, in [0, 1). Default: the pipeline's. */
  random?: () => number;
  /**
   * Caps retries to a share of recent traffic: options for a budget of this strategy's own, or a
   * `RetryBudget` shared with other strategies. When it is spent, the loop ends with the last outcome.
   */
  budget?: RetryBudget | RetryBudgetOptions;
}

/** Every option of the retry strategy, with its rule and default. @internal */
export const RETRY_OPTIONS: OptionsSchema<RetryStrategyOptions> = {
  name: option.string(),
  maxRetryAttempts: option.number({ min: 0, integer: true, allowInfinity: true }, DEFAULT_RETRY_MAX_ATTEMPTS),
  delay: option.duration({}, DEFAULT_RETRY_DELAY),
  backoffType: option.oneOf(['constant', 'linear', 'exponential'], DEFAULT_RETRY_BACKOFF_TYPE),
  useJitter: option.boolean(false),
  maxDelay: option.duration(),
  delayGenerator: option.func(),
  shouldHandle: option.func(),
  onRetry: option.func(),
  retryOnBrokenCircuit: option.boolean(false),
  honorRetryAfter: option.boolean(true),
  retryAfter: option.func(),
  random: option.func(),
  budget: option.custom({ kind: 'object', fields: RETRY_BUDGET_OPTIONS, check: validateRetryBudget }),
};

/** @internal */
export const RETRY_OPTION_KEYS = optionKeys(RETRY_OPTIONS);

/** What the options schema cannot check: `maxDelay` against `delay`. @internal */
export function checkRetryOptions(v: OptionsValidator, options: RetryStrategyOptions<unknown>): void {
  if (
    typeof options.maxDelay === 'number' &&
    typeof options.delay === 'number' &&
    options.maxDelay < options.delay &&
    options.maxDelay >= 0
  ) {
    v.add('maxDelay', options.maxDelay, RULES.atLeast(`delay (${options.delay})`));
  }
}
