import type { TimeProvider } from '../../time/time.provider.js';
import { ReplenishingLimiter } from './replenishing.limiter.js';

/** @publicApi */
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
  private readonly segments: Int32Array;
  private readonly segmentDuration: number;
  private current = 0;
  private segmentStart: number | undefined;
  private total = 0;

  constructor(
    private readonly options: SlidingWindowLimiterOptions,
    time: TimeProvider,
  ) {
    super(time, options.queueLimit ?? 0);
    const n = options.segmentsPerWindow ?? 10;
    this.segments = new Int32Array(n);
    this.segmentDuration = options.window / n;
  }

  protected replenish(now: number): void {
    if (this.segmentStart === undefined) {
      this.segmentStart = now;
      return;
    }
    const steps = Math.floor((now - this.segmentStart) / this.segmentDuration);
    if (steps <= 0) return;
    const n = this.segments.length;
    if (steps >= n) {
      this.segments.fill(0);
      this.total = 0;
      this.current = (this.current + steps) % n;
    } else {
      for (let i = 0; i < steps; i++) {
        this.current = (this.current + 1) % n;
        this.total -= this.segments[this.current];
        this.segments[this.current] = 0;
      }
    }
    this.segmentStart += steps * this.segmentDuration;
  }

  protected tryTake(): boolean {
    if (this.total >= this.options.permitLimit) return false;
    this.segments[this.current]++;
    this.total++;
    return true;
  }

  protected nextReplenishAt(): number {
    return this.segmentStart! + this.segmentDuration;
  }

  protected retryAfter(now: number, queued: number): number {
    // Walk the segments from the oldest: each leaves the window one segment later than the one before.
    const n = this.segments.length;
    let free = this.options.permitLimit - this.total;
    for (let k = 1; k <= n; k++) {
      free += this.segments[(this.current + k) % n];
      if (free > queued) return this.segmentStart! + k * this.segmentDuration - now;
    }
    return this.options.window;
  }

  protected isFull(): boolean {
    return this.total === 0;
  }
}
