import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import {
  AdaptiveThrottlingStateProvider,
  adaptiveThrottlingRejectProbability,
  isAdaptiveThrottlingRejectedError,
  ResiliencePipelineBuilder,
} from '../../../src/core/index.js';
import { FakeTimeProvider } from '../../../src/testing/index.js';

/** A small seeded generator (mulberry32): values in [0, 1). */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const refusal = () => Promise.reject(Object.assign(new Error('Service Unavailable'), { status: 503 }));

describe('adaptive throttling (property)', () => {
  it('rejects with the probability of the formula, within sampling error', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: 40 }),
        fc.integer({ min: 0, max: 40 }),
        fc.double({ min: 1, max: 4, noNaN: true }),
        fc.integer(),
        async (refused, accepted, k, seed) => {
          let random: () => number = () => 0.999_999;
          const stateProvider = new AdaptiveThrottlingStateProvider();
          const pipeline = new ResiliencePipelineBuilder({
            timeProvider: new FakeTimeProvider(),
            random: () => random(),
          })
            .addAdaptiveThrottling({ k, stateProvider })
            .build();
          // The history: `accepted` answers and `refused` refusals, none rejected locally (draws near 1).
          for (let i = 0; i < accepted; i++) await pipeline.execute(() => 'ok');
          for (let i = 0; i < refused; i++) await pipeline.execute(refusal).catch(() => undefined);
          const start = stateProvider.statistics;
          expect(start.rejectProbability).toBeCloseTo(
            adaptiveThrottlingRejectProbability(refused + accepted, accepted, k),
            12,
          );

          // Probes the dependency refuses: each adds a request and no accept, so probe i sees
          // requests = start + i; the number rejected is a sum of independent Bernoulli(p_i).
          random = seeded(seed);
          const probes = 150;
          let rejected = 0;
          let expected = 0;
          let variance = 0;
          for (let i = 0; i < probes; i++) {
            const p = adaptiveThrottlingRejectProbability(start.requests + i, start.accepts, k);
            expected += p;
            variance += p * (1 - p);
            const error = await pipeline.execute(refusal).catch((e: unknown) => e);
            if (isAdaptiveThrottlingRejectedError(error)) rejected++;
          }
          expect(Math.abs(rejected - expected)).toBeLessThanOrEqual(4 * Math.sqrt(variance) + 1);
          expect(stateProvider.statistics.requests).toBe(start.requests + probes);
          expect(stateProvider.statistics.throttled).toBe(rejected);
        },
      ),
      { numRuns: 25 },
    );
  });

  it('the probability is the formula: 0 while accepts keep up, below 1 always, rising with refusals', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 10_000 }),
        fc.integer({ min: 0, max: 10_000 }),
        fc.double({ min: 1, max: 10, noNaN: true }),
        (requests, accepts, k) => {
          const p = adaptiveThrottlingRejectProbability(requests, Math.min(accepts, requests), k);
          expect(p).toBeGreaterThanOrEqual(0);
          expect(p).toBeLessThan(1);
          if (requests <= k * Math.min(accepts, requests)) expect(p).toBe(0);
          else expect(p).toBeCloseTo((requests - k * Math.min(accepts, requests)) / (requests + 1), 12);
          expect(
            adaptiveThrottlingRejectProbability(requests + 1, Math.min(accepts, requests), k),
          ).toBeGreaterThanOrEqual(p);
        },
      ),
    );
  });
});
