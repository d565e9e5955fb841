import type { TimeProvider } from '../../time/time.provider.js';
import { ReplenishingLimiter } from './replenishing.limiter.js';

/** Options of a fixed-window limiter: `permitLimit` calls per `window` milliseconds. @publicApi */
export interface FixedWindowLimiterOptions {
  /** Calls admitted per window. */
  readonly permitLimit: number;
  /** The window, in milliseconds; windows follow each other from the first call. */
  readonly window: number;
  /** Callers that may wait for the next window. Default 0. */
  readonly queueLimit?: number;
}

/** At most `permitLimit` calls per fixed window. @publicApi */
export class FixedWindowRateLimiter extends ReplenishingLimiter {
  private windowStart: number | undefined;
  private used = 0;

  constructor(
    private readonly options: FixedWindowLimiterOptions,
    time: TimeProvider,
  ) {
    super(time, options.queueLimit ?? 0);
  }

  protected replenish(now: number): void {
    if (this.windowStart === undefined) {
      this.windowStart = now;
      return;
    }
    const windows = Math.floor((now - this.windowStart) / this.options.window);
    if (windows <= 0) return;
    this.windowStart += windows * this.options.window;
    this.used = 0;
  }

  protected tryTake(): boolean {
    if (this.used >= this.options.permitLimit) return false;
    this.used++;
    return true;
  }

  protected nextReplenishAt(): number {
    return this.windowStart! + this.options.window;
  }

  protected retryAfter(now: number, queued: number): number {
    const windowsAhead = Math.floor(queued / this.options.permitLimit);
    return this.windowStart! + (windowsAhead + 1) * this.options.window - now;
  }

  protected isFull(): boolean {
    return this.used === 0;
  }

  protected remaining(): number {
    return this.options.permitLimit - this.used;
  }

  protected resetAfter(now: number): number {
    return this.used === 0 ? 0 : this.windowStart! + this.options.window - now;
  }
}
