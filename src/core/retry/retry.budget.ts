import { systemTimeProvider, type TimeProvider } from '../time/time.provider.js';
import type { OptionsValidator } from '../strategy/options.validation.js';
import { SlidingCounters } from '../utils/sliding-counters.js';
import { RULES } from '../resilience.messages.js';
import { option, optionKeys, validateOptions, type OptionsSchema } from '../strategy/options.schema.js';

/** Options of a `RetryBudget`: the share of calls that may be retries, a floor per second, and the window measured. @publicApi */
export interface RetryBudgetOptions {
  /** Retries allowed as a share of the calls in the window. Default 0.2 (one retry per five calls). */
  ratio?: number;
  /** Retries allowed per second whatever the traffic, so quiet services can still retry. Default 10. */
  minRetriesPerSecond?: number;
  /** The sliding window calls and retries are counted over, in milliseconds. Default 10000. */
  window?: number;
}

/** Every option of a retry budget. @internal */
export const RETRY_BUDGET_OPTIONS: OptionsSchema<RetryBudgetOptions> = {
  ratio: option.number({ min: 0 }, 0.2),
  minRetriesPerSecond: option.number({ min: 0 }, 10),
  window: option.duration({ min: 10 }, 10_000),
};

/** The options a `RetryBudget` accepts. @internal */
export const RETRY_BUDGET_OPTION_KEYS = optionKeys(RETRY_BUDGET_OPTIONS);

const BUCKETS = 10;
const CALLS = 0;
const RETRIES = 1;

/**
 * Caps retries to a share of recent traffic plus a small floor, so a struggling dependency never sees a
 * retry storm (Finagle's and Envoy's retry budget): with `ratio` 0.2, at most one retry per five calls
 * over the window, plus `minRetriesPerSecond`. Give one instance to several retry strategies to share it.
 *
 * @publicApi
 */
export class RetryBudget {
  private readonly window: SlidingCounters;
  private readonly ratio: number;
  private readonly floor: number;

  constructor(
    options: RetryBudgetOptions = {},
    private readonly timeProvider: TimeProvider = systemTimeProvider,
  ) {
    const window = options.window ?? 10_000;
    this.ratio = options.ratio ?? 0.2;
    this.floor = ((options.minRetriesPerSecond ?? 10) * window) / 1_000;
    this.window = new SlidingCounters(BUCKETS, window, 2);
  }

  /** Counts an original call (retry strategies call this once per execution). */
  recordCall(): void {
    this.window.advance(this.timeProvider.now());
    this.window.add(CALLS);
  }

  /** Takes one retry from the budget if it allows one. */
  tryWithdraw(): boolean {
    this.window.advance(this.timeProvider.now());
    if (this.window.total(RETRIES) + 1 > this.ratio * this.window.total(CALLS) + this.floor) return false;
    this.window.add(RETRIES);
    return true;
  }

  /** Calls and retries counted in the window, and how many retries it allows now. */
  get statistics(): { calls: number; retries: number; allowed: number } {
    this.window.advance(this.timeProvider.now());
    const calls = this.window.total(CALLS);
    return { calls, retries: this.window.total(RETRIES), allowed: Math.floor(this.ratio * calls + this.floor) };
  }
}

/** @internal */
export function validateRetryBudget(v: OptionsValidator, _key: string, budget: unknown): void {
  if (budget === undefined || budget instanceof RetryBudget) return;
  if (typeof budget !== 'object' || budget === null) {
    v.add('budget', budget, RULES.retryBudget);
    return;
  }
  const o = budget as RetryBudgetOptions;
  validateOptions(v.child('budget'), RETRY_BUDGET_OPTIONS, o);
}
