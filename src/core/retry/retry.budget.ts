import { systemTimeProvider, type TimeProvider } from '../time/time.provider.js';
import type { OptionsValidator } from '../utils/options.validation.js';

/** @publicApi */
export interface RetryBudgetOptions {
  /** Retries allowed as a share of the calls in the window. Default 0.2 (one retry per five calls). */
  ratio?: number;
  /** Retries allowed per second whatever the traffic, so quiet services can still retry. Default 10. */
  minRetriesPerSecond?: number;
  /** The sliding window calls and retries are counted over, in milliseconds. Default 10000. */
  window?: number;
}

const BUCKETS = 10;

/**
 * Caps retries to a share of recent traffic plus a small floor, so a struggling dependency never sees a
 * retry storm (Finagle's and Envoy's retry budget): with `ratio` 0.2, at most one retry per five calls
 * over the window, plus `minRetriesPerSecond`. Give one instance to several retry strategies to share it.
 *
 * @publicApi
 */
export class RetryBudget {
  private readonly calls = new Float64Array(BUCKETS);
  private readonly retries = new Float64Array(BUCKETS);
  private readonly bucketDuration: number;
  private current = 0;
  private bucketStart: number | undefined;
  private readonly ratio: number;
  private readonly floor: number;

  constructor(
    options: RetryBudgetOptions = {},
    private readonly timeProvider: TimeProvider = systemTimeProvider,
  ) {
    const window = options.window ?? 10_000;
    this.ratio = options.ratio ?? 0.2;
    this.floor = ((options.minRetriesPerSecond ?? 10) * window) / 1_000;
    this.bucketDuration = window / BUCKETS;
  }

  /** Counts an original call (retry strategies call this once per execution). */
  recordCall(): void {
    this.advance(this.timeProvider.now());
    this.calls[this.current]++;
  }

  /** Takes one retry from the budget if it allows one. */
  tryWithdraw(): boolean {
    this.advance(this.timeProvider.now());
    if (sum(this.retries) + 1 > this.ratio * sum(this.calls) + this.floor) return false;
    this.retries[this.current]++;
    return true;
  }

  /** Calls and retries counted in the window, and how many retries it allows now. */
  get statistics(): { calls: number; retries: number; allowed: number } {
    this.advance(this.timeProvider.now());
    const calls = sum(this.calls);
    return { calls, retries: sum(this.retries), allowed: Math.floor(this.ratio * calls + this.floor) };
  }

  private advance(now: number): void {
    if (this.bucketStart === undefined) {
      this.bucketStart = now;
      return;
    }
    const steps = Math.floor((now - this.bucketStart) / this.bucketDuration);
    if (steps <= 0) return;
    for (let i = 0; i < Math.min(steps, BUCKETS); i++) {
      this.current = (this.current + 1) % BUCKETS;
      this.calls[this.current] = 0;
      this.retries[this.current] = 0;
    }
    this.bucketStart += steps * this.bucketDuration;
  }
}

function sum(values: Float64Array): number {
  let total = 0;
  for (const v of values) total += v;
  return total;
}

/** @internal */
export function validateRetryBudget(v: OptionsValidator, budget: unknown): void {
  if (budget === undefined || budget instanceof RetryBudget) return;
  if (typeof budget !== 'object' || budget === null) {
    v.add('budget', budget, 'must be a RetryBudget or its options');
    return;
  }
  const o = budget as RetryBudgetOptions;
  v.child('budget')
    .knownKeys(o, ['ratio', 'minRetriesPerSecond', 'window'])
    .number('ratio', o.ratio, { min: 0 })
    .number('minRetriesPerSecond', o.minRetriesPerSecond, { min: 0 })
    .duration('window', o.window, { min: 10 });
}
