import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import {
  ChainedRateLimiter,
  FixedWindowRateLimiter,
  ResilienceContext,
  SlidingWindowRateLimiter,
  TokenBucketRateLimiter,
  type RateLimiter,
  type RateLimitLease,
} from '../../../src/core.entry.js';
import { FakeTimeProvider } from '../../../src/testing/index.js';

interface Subject {
  readonly name: string;
  readonly quota: number;
  /** The longest `resetAfter` can be. */
  readonly longestReset: number;
  make(time: FakeTimeProvider): RateLimiter;
}

const SUBJECTS: Subject[] = [
  {
    name: 'fixed window',
    quota: 4,
    longestReset: 1_000,
    make: (time) => new FixedWindowRateLimiter({ permitLimit: 4, window: 1_000 }, time),
  },
  {
    name: 'sliding window',
    quota: 4,
    longestReset: 1_000,
    make: (time) => new SlidingWindowRateLimiter({ permitLimit: 4, window: 1_000, segmentsPerWindow: 4 }, time),
  },
  {
    name: 'token bucket',
    quota: 3,
    longestReset: 3 * 500,
    make: (time) => new TokenBucketRateLimiter({ tokenLimit: 3, tokensPerPeriod: 1, replenishmentPeriod: 500 }, time),
  },
];

/** A history: wait, then ask for a few permits at once. */
const historyArb = fc.array(
  fc.record({ wait: fc.integer({ min: 0, max: 1_500 }), asks: fc.integer({ min: 0, max: 5 }) }),
  {
    maxLength: 12,
  },
);

function take(limiter: RateLimiter): RateLimitLease {
  return limiter.acquire(new ResilienceContext()) as RateLimitLease; // no queue: always answered at once
}

describe.each(SUBJECTS)('the quota a $name reports on its leases (property)', (subject) => {
  it('remaining is exactly the permits still admitted now; the quota is whole after resetAfter, not before', () => {
    fc.assert(
      fc.property(historyArb, (history) => {
        const time = new FakeTimeProvider();
        const limiter = subject.make(time);
        for (const { wait, asks } of history) {
          time.advance(wait);
          for (let i = 0; i < asks; i++) {
            const lease = take(limiter);
            expect(lease.remaining).toBeGreaterThanOrEqual(0);
            expect(lease.remaining).toBeLessThan(subject.quota);
            expect(lease.resetAfter).toBeGreaterThanOrEqual(0);
            expect(lease.resetAfter).toBeLessThanOrEqual(subject.longestReset);
            if (!lease.acquired) expect(lease.remaining).toBe(0);
          }
        }
        // Now: the next answer says how many more would be admitted at this instant, and no more are.
        let lease = take(limiter);
        if (lease.acquired) {
          const left = lease.remaining!;
          for (let i = 0; i < left; i++)
            expect(take(limiter)).toMatchObject({ acquired: true, remaining: left - 1 - i });
          lease = take(limiter);
        }
        expect(lease).toMatchObject({ acquired: false, remaining: 0 });
        expect(lease.retryAfter).toBeGreaterThan(0);
        expect(lease.retryAfter).toBeLessThanOrEqual(lease.resetAfter!);
        // `resetAfter` later every permit is back: the next one leaves quota − 1 ...
        const resetAfter = lease.resetAfter!;
        time.advance(resetAfter);
        expect(take(limiter)).toMatchObject({ acquired: true, remaining: subject.quota - 1 });
        // ... and not a millisecond earlier (the same history replayed on a twin).
        const twinTime = new FakeTimeProvider();
        const twin = subject.make(twinTime);
        for (const { wait, asks } of history) {
          twinTime.advance(wait);
          for (let i = 0; i < asks; i++) take(twin);
        }
        while (take(twin).acquired);
        twinTime.advance(resetAfter - 1);
        const early = take(twin);
        expect(!early.acquired || early.remaining! < subject.quota - 1).toBe(true);
      }),
      { numRuns: 150 },
    );
  });
});

describe('the quota of a chained limiter', () => {
  it('reports the tightest limit on admission, and the rejecting one\u2019s on rejection', () => {
    const time = new FakeTimeProvider();
    const chained = new ChainedRateLimiter([
      new FixedWindowRateLimiter({ permitLimit: 5, window: 1_000 }, time),
      new TokenBucketRateLimiter({ tokenLimit: 2, replenishmentPeriod: 3_000 }, time),
    ]);
    expect(take(chained)).toMatchObject({ acquired: true, remaining: 1, resetAfter: 3_000 });
    expect(take(chained)).toMatchObject({ acquired: true, remaining: 0, resetAfter: 6_000 });
    expect(take(chained)).toMatchObject({ acquired: false, remaining: 0, resetAfter: 6_000, retryAfter: 3_000 });
  });
});
