import type { TimeProvider } from '../../time/time.provider.js';
import { ReplenishingLimiter } from './replenishing.limiter.js';

/** Options of a token bucket: bursts up to `tokenLimit`, refilled by `tokensPerPeriod` each `replenishmentPeriod`. @publicApi */
export interface TokenBucketLimiterOptions {
  /** The bucket's size: the largest burst. */
  readonly tokenLimit: number;
  /** Tokens added every `replenishmentPeriod`. Default 1. */
  readonly tokensPerPeriod?: number;
  /** Milliseconds between refills. */
  readonly replenishmentPeriod: number;
  /** Callers that may wait for a token. Default 0. */
  readonly queueLimit?: number;
}

/** A token bucket: bursts up to `tokenLimit`, refilled by `tokensPerPeriod` each period. @publicApi */
export class TokenBucketRateLimiter extends ReplenishingLimiter {
  private tokens: number;
  private lastRefill: number | undefined;
  private readonly perPeriod: number;

  constructor(
    private readonly options: TokenBucketLimiterOptions,
    time: TimeProvider,
  ) {
    super(time, options.queueLimit ?? 0);
    this.tokens = options.tokenLimit;
    this.perPeriod = options.tokensPerPeriod ?? 1;
  }

  /** Tokens in the bucket now. */
  get availableTokens(): number {
    this.replenish(this.time.now());
    return this.tokens;
  }

  protected replenish(now: number): void {
    if (this.lastRefill === undefined) {
      this.lastRefill = now;
      return;
    }
    const periods = Math.floor((now - this.lastRefill) / this.options.replenishmentPeriod);
    // Stryker disable next-line EqualityOperator: equivalent — zero periods add no token and move no refill time either way
    if (periods <= 0) return;
    this.tokens = Math.min(this.options.tokenLimit, this.tokens + periods * this.perPeriod);
    this.lastRefill += periods * this.options.replenishmentPeriod;
  }

  protected tryTake(): boolean {
    if (this.tokens < 1) return false;
    this.tokens--;
    return true;
  }

  protected nextReplenishAt(): number {
    return this.lastRefill! + this.options.replenishmentPeriod;
  }

  protected retryAfter(now: number, queued: number): number {
    const missing = queued + 1 - this.tokens;
    const periods = Math.max(1, Math.ceil(missing / this.perPeriod));
    return this.lastRefill! + periods * this.options.replenishmentPeriod - now;
  }

  protected isFull(): boolean {
    return this.tokens >= this.options.tokenLimit;
  }

  protected remaining(): number {
    return Math.floor(this.tokens);
  }

  protected resetAfter(now: number): number {
    const missing = this.options.tokenLimit - this.tokens;
    if (missing <= 0) return 0;
    return this.lastRefill! + Math.ceil(missing / this.perPeriod) * this.options.replenishmentPeriod - now;
  }
}
