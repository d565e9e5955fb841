import type { TimeProvider } from '../../time/time.provider.js';
import { SlidingCounters } from '../../utils/sliding-counters.js';
import { ReplenishingLimiter } from './replenishing.limiter.js';

/** Options of a sliding-window limiter: `permitLimit` calls in any `window`, measured in segments. @publicApi */
export interface SlidingWindowLimiterOptions {
  /** Calls admitted in any window. */
  readonly permitLimit: number;
  /** The window, in milliseconds. */
  readonly window: number;
  /** How finely the window slides: it moves one segment at a time. Default 10. */
  readonly segmentsPerWindow?: number;
  /** Callers that may wait for permits to expire. Default 0. */
  readonly queueLimit?: number;
}

/**
 * At most `permitLimit` calls in any sliding window, tracked in `segmentsPerWindow` segments: a permit
 * comes back when the segment it was taken in leaves the window.
 *
 * @publicApi
 */
export class SlidingWindowRateLimiter extends ReplenishingLimiter {
  private readonly window: SlidingCounters;
  private readonly segments: number;

  constructor(
    private readonly options: SlidingWindowLimiterOptions,
    time: TimeProvider,
  ) {
    super(time, options.queueLimit ?? 0);
    this.segments = options.segmentsPerWindow ?? 10;
    this.window = new SlidingCounters(this.segments, options.window);
  }

  protected replenish(now: number): void {
    this.window.advance(now);
  }

  protected tryTake(): boolean {
    if (this.window.total() >= this.options.permitLimit) return false;
    this.window.add();
    return true;
  }

  protected nextReplenishAt(): number {
    return this.window.currentEndsAt;
  }

  protected retryAfter(now: number, queued: number): number {
    // Walk the segments from the oldest: each leaves the window one segment later than the one before.
    let free = this.options.permitLimit - this.window.total();
    for (let age = this.segments - 1; age >= 0; age--) {
      free += this.window.at(age);
      if (free > queued) return this.window.leavesAt(age) - now;
    }
    return this.options.window;
  }

  protected isFull(): boolean {
    return this.window.total() === 0;
  }

  protected remaining(): number {
    return Math.max(0, this.options.permitLimit - this.window.total());
  }

  protected resetAfter(now: number): number {
    // Every permit is back when the newest segment that holds one leaves the window.
    for (let age = 0; age < this.segments; age++) if (this.window.at(age) > 0) return this.window.leavesAt(age) - now;
    return 0;
  }
}
