import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { clampDelay, computeBackoffDelay } from '../../../src/core/retry/backoff.helper.js';
import { MAX_TIMER_DELAY, type BackoffType } from '../../../src/core.entry.js';

const backoffTypes: BackoffType[] = ['constant', 'linear', 'exponential'];

describe('backoff maths', () => {
  it('is never NaN, infinite, negative or above maxDelay, for any attempt up to 10,000', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...backoffTypes),
        fc.boolean(),
        fc.integer({ min: 0, max: MAX_TIMER_DELAY }),
        fc.option(fc.integer({ min: 0, max: MAX_TIMER_DELAY }), { nil: undefined }),
        fc.array(fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }), { minLength: 1, maxLength: 16 }),
        fc.integer({ min: 1, max: 10_000 }),
        (backoffType, useJitter, delay, maxDelay, randoms, attempts) => {
          const state = { previous: 0 };
          let i = 0;
          const random = () => randoms[i++ % randoms.length];
          const cap = maxDelay ?? MAX_TIMER_DELAY;
          // Walk every attempt in order, as one execution does (decorrelated jitter carries state).
          for (let attempt = 0; attempt < attempts; attempt++) {
            const d = computeBackoffDelay({ backoffType, useJitter, delay, maxDelay }, attempt, state, random);
            if (!Number.isFinite(d) || d < 0 || d > cap) return false;
          }
          return true;
        },
      ),
      { numRuns: 200 },
    );
  });

  it('waits 0 for every attempt when the base delay is 0, as Polly does, past the overflow point too', () => {
    for (const backoffType of backoffTypes) {
      for (const useJitter of [false, true]) {
        const state = { previous: 0 };
        const delays = [0, 1, 2, 1_023, 1_024, 1_025, 10_000].map((attempt) =>
          computeBackoffDelay({ backoffType, useJitter, delay: 0, maxDelay: 5_000 }, attempt, state, () => 0.7),
        );
        expect(`${backoffType} ${useJitter}: ${delays.join(' ')}`).toBe(`${backoffType} ${useJitter}: 0 0 0 0 0 0 0`);
      }
    }
  });

  it('matches Polly for constant, linear and exponential without jitter', () => {
    const state = { previous: 0 };
    const r = () => 0.5;
    const at = (backoffType: BackoffType, attempt: number) =>
      computeBackoffDelay({ backoffType, useJitter: false, delay: 200 }, attempt, state, r);
    expect([0, 1, 2, 3].map((a) => at('constant', a))).toEqual([200, 200, 200, 200]);
    expect([0, 1, 2, 3].map((a) => at('linear', a))).toEqual([200, 400, 600, 800]);
    expect([0, 1, 2, 3].map((a) => at('exponential', a))).toEqual([200, 400, 800, 1_600]);
  });

  it('keeps jittered constant and linear delays within ±25 %', () => {
    fc.assert(
      fc.property(
        fc.constantFrom<BackoffType>('constant', 'linear'),
        fc.integer({ min: 1, max: 100_000 }),
        fc.integer({ min: 0, max: 50 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (backoffType, delay, attempt, rnd) => {
          const base = backoffType === 'constant' ? delay : delay * (attempt + 1);
          const d = computeBackoffDelay({ backoffType, useJitter: true, delay }, attempt, { previous: 0 }, () => rnd);
          return d >= base * 0.75 - 1e-6 && d <= base * 1.25 + 1e-6;
        },
      ),
    );
  });

  it('spreads decorrelated jitter around the exponential curve, never below zero', () => {
    // With random = 0 the formula reduces to a deterministic sequence; its sum tracks 2^n × base / 1.4.
    const state = { previous: 0 };
    const delays = [0, 1, 2, 3, 4].map((a) =>
      computeBackoffDelay({ backoffType: 'exponential', useJitter: true, delay: 1_000 }, a, state, () => 0),
    );
    expect(delays[0]).toBe(0);
    delays.forEach((d) => expect(d).toBeGreaterThanOrEqual(0));
    const total = delays.reduce((a, b) => a + b, 0);
    expect(total).toBeCloseTo((Math.pow(2, 4) * Math.tanh(Math.sqrt(16)) * 1_000) / 1.4, 3);
  });

  it('stays finite past the overflow point of 2^attempt', () => {
    const state = { previous: 0 };
    for (const attempt of [1_023, 1_024, 1_025, 5_000, 10_000]) {
      const d = computeBackoffDelay(
        { backoffType: 'exponential', useJitter: true, delay: 10 },
        attempt,
        state,
        () => 0.7,
      );
      expect(d).toBe(MAX_TIMER_DELAY);
    }
    expect(
      computeBackoffDelay(
        { backoffType: 'exponential', useJitter: false, delay: 10, maxDelay: 30_000 },
        2_000,
        state,
        Math.random,
      ),
    ).toBe(30_000);
  });
});

describe('clampDelay', () => {
  it.each<[string, number, number | undefined, number]>([
    ['a delay within the cap is kept', 250, 1_000, 250],
    ['a delay equal to the cap is the cap', 1_000, 1_000, 1_000],
    ['a delay above maxDelay is maxDelay', 1_001, 1_000, 1_000],
    [
      'without maxDelay, a delay above the largest timer delay is that delay',
      MAX_TIMER_DELAY + 1,
      undefined,
      MAX_TIMER_DELAY,
    ],
    ['a maxDelay above the largest timer delay caps at that delay', Infinity, MAX_TIMER_DELAY * 2, MAX_TIMER_DELAY],
    ['a negative delay is 0', -5, 1_000, 0],
    ['negative infinity is 0', -Infinity, undefined, 0],
    ['NaN is the cap', NaN, 1_000, 1_000],
    ['NaN without maxDelay is the largest timer delay', NaN, undefined, MAX_TIMER_DELAY],
    ['0 stays 0', 0, 0, 0],
  ])('%s', (_what, delay, maxDelay, expected) => {
    expect(clampDelay(delay, maxDelay)).toBe(expected);
  });
});
