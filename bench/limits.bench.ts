import { bulkhead } from 'cockatiel';
import { ResiliencePipelineBuilder } from '../src/index.js';
import type { BenchScenario } from './bench.harness.js';
import { bareBatchCase, bareCase, batch, CONCURRENT_CALLS, plainFifoBulkhead, value } from './reference.bench.js';

const PERMITS = 100;

export function limitScenarios(): BenchScenario[] {
  return [
    {
      id: 'bulkhead',
      title: `bulkhead, ${PERMITS} permits, ${CONCURRENT_CALLS.toLocaleString('en-US')} calls at once (the rest queued)`,
      callsPerRun: CONCURRENT_CALLS,
      cases: [
        bareBatchCase,
        {
          name: 'plain FIFO of resolvers (reference)',
          setup: () => {
            const limit = plainFifoBulkhead(PERMITS);
            return batch(() => limit(value));
          },
        },
        {
          name: 'nest-resilience',
          setup: () => {
            const pipeline = new ResiliencePipelineBuilder().addConcurrencyLimiter(PERMITS, CONCURRENT_CALLS).build();
            return batch(() => pipeline.execute(value));
          },
        },
        {
          // The same permits, held by the adaptive limiter: every call is measured and every window moves the limit.
          name: 'nest-resilience (adaptive concurrency)',
          setup: () => {
            const pipeline = new ResiliencePipelineBuilder()
              .addAdaptiveConcurrencyLimiter({
                initialLimit: PERMITS,
                minLimit: PERMITS,
                maxLimit: PERMITS,
                queueLimit: CONCURRENT_CALLS,
              })
              .build();
            return batch(() => pipeline.execute(value));
          },
        },
        {
          name: 'cockatiel',
          setup: () => {
            const policy = bulkhead(PERMITS, CONCURRENT_CALLS);
            return batch(() => policy.execute(value));
          },
        },
      ],
    },
    {
      id: 'adaptive-throttling',
      title: 'adaptive throttling, dependency accepting (the hot path), vs a fixed concurrency limiter',
      cases: [
        bareCase,
        {
          name: 'fixed concurrency limiter',
          setup: () => {
            const pipeline = new ResiliencePipelineBuilder().addConcurrencyLimiter(1_000_000).build();
            return () => pipeline.execute(value);
          },
        },
        {
          name: 'nest-resilience',
          setup: () => {
            const pipeline = new ResiliencePipelineBuilder().addAdaptiveThrottling().build();
            return () => pipeline.execute(value);
          },
        },
      ],
    },
    {
      id: 'token-bucket',
      title: 'token bucket, admitted',
      cases: [
        bareCase,
        {
          name: 'nest-resilience',
          setup: () => {
            const pipeline = new ResiliencePipelineBuilder()
              .addRateLimiter({
                kind: 'token-bucket',
                tokenLimit: 1_000_000_000,
                tokensPerPeriod: 1_000_000_000,
                replenishmentPeriod: 1_000,
              })
              .build();
            return () => pipeline.execute(value);
          },
        },
      ],
    },
  ];
}
