import { circuitBreaker, ConsecutiveBreaker, handleAll, SamplingBreaker } from 'cockatiel';
import CircuitBreaker from 'opossum';
import { ResiliencePipelineBuilder } from '../src/index.js';
import type { BenchCase, BenchScenario } from './bench.harness.js';
import { bareCase, value } from './reference.bench.js';

const failing = async (): Promise<number> => {
  throw new Error('down');
};
const swallow = (): undefined => undefined;

const opossumClosed: BenchCase = {
  name: 'opossum',
  shareKey: 'opossum-closed',
  setup: () => {
    const breaker = new CircuitBreaker(value, { timeout: false, resetTimeout: 10_000, errorThresholdPercentage: 50 });
    return () => breaker.fire();
  },
};

export function circuitBreakerScenarios(): BenchScenario[] {
  return [
    {
      id: 'breaker-closed',
      title: 'circuit breaker, closed, success',
      cases: [
        bareCase,
        {
          name: 'nest-resilience',
          setup: () => {
            const pipeline = new ResiliencePipelineBuilder()
              .addCircuitBreaker({ kind: 'consecutive', failureThreshold: 5 })
              .build();
            return () => pipeline.execute(value);
          },
        },
        {
          name: 'cockatiel',
          setup: () => {
            const policy = circuitBreaker(handleAll, { halfOpenAfter: 10_000, breaker: new ConsecutiveBreaker(5) });
            return () => policy.execute(value);
          },
        },
        opossumClosed,
      ],
    },
    {
      id: 'breaker-time-window',
      title: 'circuit breaker (time window), closed, success',
      cases: [
        bareCase,
        {
          name: 'nest-resilience',
          setup: () => {
            const pipeline = new ResiliencePipelineBuilder()
              .addCircuitBreaker({
                kind: 'time-window',
                failureRatio: 0.5,
                samplingDuration: 10_000,
                minimumThroughput: 10,
              })
              .build();
            return () => pipeline.execute(value);
          },
        },
        {
          name: 'cockatiel',
          setup: () => {
            const policy = circuitBreaker(handleAll, {
              halfOpenAfter: 10_000,
              breaker: new SamplingBreaker({ threshold: 0.5, duration: 10_000, minimumRps: 1 }),
            });
            return () => policy.execute(value);
          },
        },
        opossumClosed,
      ],
    },
    {
      id: 'breaker-open',
      title: 'circuit breaker, open, rejection',
      cases: [
        bareCase,
        {
          name: 'nest-resilience',
          setup: async () => {
            const pipeline = new ResiliencePipelineBuilder()
              .addCircuitBreaker({ kind: 'consecutive', failureThreshold: 1, breakDuration: 3_600_000 })
              .build();
            await pipeline.execute(failing).catch(swallow);
            return () => pipeline.execute(value).catch(swallow);
          },
        },
        {
          name: 'cockatiel',
          setup: async () => {
            const policy = circuitBreaker(handleAll, { halfOpenAfter: 3_600_000, breaker: new ConsecutiveBreaker(1) });
            await policy.execute(failing).catch(swallow);
            return () => policy.execute(value).catch(swallow);
          },
        },
        {
          name: 'opossum',
          setup: () => {
            const breaker = new CircuitBreaker(value, { timeout: false, resetTimeout: 3_600_000 });
            breaker.open();
            return () => breaker.fire().catch(swallow);
          },
        },
      ],
    },
  ];
}
