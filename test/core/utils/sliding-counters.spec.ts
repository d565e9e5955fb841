import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { ResilienceContext, RetryBudget, SlidingWindowRateLimiter } from '../../../src/core.entry.js';
import { FakeTimeProvider } from '../../../src/testing/index.js';

/**
 * The sliding counters behind the retry budget and the sliding-window limiter, checked against a plain
 * model: the window starts at the first use, time falls into segments of window / segments, and an event
 * counts while its segment is one of the last `segments` ones.
 */
class Model {
  private readonly events: { segment: number; kind: number }[] = [];
  private start: number | undefined;

  constructor(
    readonly segments: number,
    readonly segmentDuration: number,
  ) {}

  segmentAt(now: number): number {
    this.start ??= now;
    return Math.floor((now - this.start) / this.segmentDuration);
  }

  add(now: number, kind = 0): void {
    this.events.push({ segment: this.segmentAt(now), kind });
  }

  /** Events of `kind` per age (0: the current segment) inside the window. */
  ages(now: number, kind = 0): number[] {
    const current = this.segmentAt(now);
    const ages = Array<number>(this.segments).fill(0);
    for (const e of this.events)
      if (e.kind === kind && current - e.segment < this.segments) ages[current - e.segment]++;
    return ages;
  }

  total(now: number, kind = 0): number {
    return this.ages(now, kind).reduce((a, b) => a + b, 0);
  }

  /** When the segment `age` steps old leaves the window. */
  leavesAt(now: number, age: number): number {
    return this.start! + (this.segmentAt(now) + this.segments - age) * this.segmentDuration;
  }
}

describe('sliding counters', () => {
  it('a retry budget counts calls and retries over its sliding window, as the model does', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({ wait: fc.integer({ min: 0, max: 1_500 }), op: fc.constantFrom('call', 'retry', 'look') }),
          { maxLength: 80 },
        ),
        fc.constantFrom(0, 0.5),
        (steps, ratio) => {
          const time = new FakeTimeProvider(1_000_000);
          // Ten segments of 100 ms; a floor of 2 retries per second = 2 per window.
          const budget = new RetryBudget({ window: 1_000, ratio, minRetriesPerSecond: 2 }, time);
          const model = new Model(10, 100);
          for (const { wait, op } of steps) {
            time.advance(wait);
            const now = time.now();
            if (op === 'call') {
              budget.recordCall();
              model.add(now, 0);
            } else if (op === 'retry') {
              const allowed = model.total(now, 1) + 1 <= ratio * model.total(now, 0) + 2;
              expect(budget.tryWithdraw()).toBe(allowed);
              if (allowed) model.add(now, 1);
            } else {
              const calls = model.total(now, 0);
              expect(budget.statistics).toEqual({
                calls,
                retries: model.total(now, 1),
                allowed: Math.floor(ratio * calls + 2),
              });
            }
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it('a sliding-window limiter admits and estimates the wait as the model does', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(1, 2, 4, 5, 10),
        fc.integer({ min: 1, max: 5 }),
        fc.array(fc.integer({ min: 0, max: 700 }), { maxLength: 60 }),
        (segments, permitLimit, waits) => {
          const time = new FakeTimeProvider(5_000);
          const limiter = new SlidingWindowRateLimiter(
            { permitLimit, window: 1_000, segmentsPerWindow: segments },
            time,
          );
          const model = new Model(segments, 1_000 / segments);
          const context = new ResilienceContext();
          for (const wait of waits) {
            time.advance(wait);
            const now = time.now();
            const lease = limiter.acquire(context);
            if (lease instanceof Promise) throw new Error('a limiter without a queue never queues');
            const ages = model.ages(now);
            if (model.total(now) < permitLimit) {
              expect(lease).toMatchObject({ acquired: true });
              model.add(now);
            } else {
              let free = permitLimit - model.total(now);
              let expected = 1_000;
              for (let age = segments - 1; age >= 0; age--) {
                free += ages[age];
                if (free > 0) {
                  expected = model.leavesAt(now, age) - now;
                  break;
                }
              }
              expect(lease).toMatchObject({ acquired: false, retryAfter: Math.max(0, expected) });
            }
          }
          limiter.dispose();
        },
      ),
      { numRuns: 200 },
    );
  });

  it('a window that has not started yet ends one segment after the first call', () => {
    const time = new FakeTimeProvider(300);
    const limiter = new SlidingWindowRateLimiter({ permitLimit: 1, window: 1_000, segmentsPerWindow: 4 }, time);
    const context = new ResilienceContext();
    expect(limiter.acquire(context)).toMatchObject({ acquired: true });
    time.advance(100);
    // The only permit was taken in the segment [300, 550): it comes back when that segment leaves the window.
    expect(limiter.acquire(context)).toMatchObject({ acquired: false, retryAfter: 900 });
    time.advance(900);
    expect(limiter.acquire(context)).toMatchObject({ acquired: true });
    limiter.dispose();
  });

  it('a queued caller is woken at each segment end and admitted when its permit leaves the window', async () => {
    const time = new FakeTimeProvider(300);
    const limiter = new SlidingWindowRateLimiter(
      { permitLimit: 1, window: 1_000, segmentsPerWindow: 4, queueLimit: 1 },
      time,
    );
    const context = new ResilienceContext();
    expect(limiter.acquire(context)).toMatchObject({ acquired: true });
    time.advance(100);
    let admittedAt: number | undefined;
    void Promise.resolve(limiter.acquire(context)).then(() => (admittedAt = time.now()));
    // Checked at the end of each segment: 550, 800, 1050, then admitted at 1300.
    expect(time.pendingDelays).toEqual([150]);
    await time.advanceAsync(150);
    expect(time.pendingDelays).toEqual([250]);
    await time.advanceAsync(750);
    expect(admittedAt).toBe(1_300);
    expect(time.pendingTimerCount).toBe(0);
    limiter.dispose();
  });

  it('a clock that steps back does not slide the window: the counts stay until time passes them', () => {
    class SteppingClock extends FakeTimeProvider {
      offset = 0;
      override now(): number {
        return super.now() + this.offset;
      }
    }
    const time = new SteppingClock(10_000);
    const budget = new RetryBudget({ window: 1_000, ratio: 0, minRetriesPerSecond: 0 }, time);
    for (let i = 0; i < 3; i++) budget.recordCall();
    time.offset = -500;
    expect(budget.statistics.calls).toBe(3);
    time.offset = 0;
    expect(budget.statistics.calls).toBe(3);
    time.advance(999);
    expect(budget.statistics.calls).toBe(3);
    time.advance(1);
    expect(budget.statistics.calls).toBe(0);
  });
});
