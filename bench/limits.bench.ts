import { bulkhead } from 'cockatiel';
import { ResiliencePipelineBuilder } from '../src/index.js';
import type { BenchCase } from './bench.harness.js';

const value = async (): Promise<number> => 42;
const CALLS = 10_000;

export function limitCases(): BenchCase[] {
  const ourBulkhead = new ResiliencePipelineBuilder().addConcurrencyLimiter(100, CALLS).build();
  const cockBulkhead = bulkhead(100, CALLS);
  const tokenBucket = new ResiliencePipelineBuilder()
    .addRateLimiter({
      kind: 'token-bucket',
      tokenLimit: 1_000_000_000,
      tokensPerPeriod: 1_000_000_000,
      replenishmentPeriod: 1_000,
    })
    .build();

  const batch = (run: () => Promise<unknown>) => () => Promise.all(Array.from({ length: CALLS }, run));
  const group = `concurrency limiter 100 + queue, a batch of ${CALLS} calls (ns per batch)`;
  return [
    { group, name: 'bare await fn()', run: batch(value), iterations: 40 },
    { group, name: 'nest-resilience', run: batch(() => ourBulkhead.execute(value)), iterations: 40 },
    { group, name: 'cockatiel', run: batch(() => cockBulkhead.execute(value)), iterations: 40 },

    { group: 'token bucket, admitted', name: 'bare await fn()', run: () => value() },
    { group: 'token bucket, admitted', name: 'nest-resilience', run: () => tokenBucket.execute(value) },
  ];
}
