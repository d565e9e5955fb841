import { circuitBreaker, ConsecutiveBreaker, handleAll, SamplingBreaker } from 'cockatiel';
import CircuitBreaker from 'opossum';
import { ResiliencePipelineBuilder } from '../src/index.js';
import type { BenchCase } from './bench.harness.js';

const value = async (): Promise<number> => 42;
const failing = async (): Promise<number> => {
  throw new Error('down');
};
const swallow = (): undefined => undefined;

export async function circuitBreakerCases(): Promise<BenchCase[]> {
  const ourConsecutive = new ResiliencePipelineBuilder()
    .addCircuitBreaker({ kind: 'consecutive', failureThreshold: 5 })
    .build();
  const ourTimeWindow = new ResiliencePipelineBuilder()
    .addCircuitBreaker({ kind: 'time-window', failureRatio: 0.5, samplingDuration: 10_000, minimumThroughput: 10 })
    .build();
  const cockConsecutive = circuitBreaker(handleAll, { halfOpenAfter: 10_000, breaker: new ConsecutiveBreaker(5) });
  const cockSampling = circuitBreaker(handleAll, {
    halfOpenAfter: 10_000,
    breaker: new SamplingBreaker({ threshold: 0.5, duration: 10_000, minimumRps: 1 }),
  });
  const opossum = new CircuitBreaker(value, { timeout: false, resetTimeout: 10_000, errorThresholdPercentage: 50 });

  // Open circuits: trip each once, far from their half-open time.
  const ourOpen = new ResiliencePipelineBuilder()
    .addCircuitBreaker({ kind: 'consecutive', failureThreshold: 1, breakDuration: 3_600_000 })
    .build();
  await ourOpen.execute(failing).catch(swallow);
  const cockOpen = circuitBreaker(handleAll, { halfOpenAfter: 3_600_000, breaker: new ConsecutiveBreaker(1) });
  await cockOpen.execute(failing).catch(swallow);
  const opossumOpen = new CircuitBreaker(value, { timeout: false, resetTimeout: 3_600_000 });
  opossumOpen.open();

  const group = 'circuit breaker, closed, success';
  const timeGroup = 'circuit breaker (time window), closed, success';
  const openGroup = 'circuit breaker, open, rejection';
  return [
    { group, name: 'bare await fn()', run: () => value() },
    { group, name: 'nest-resilience', run: () => ourConsecutive.execute(value) },
    { group, name: 'cockatiel', run: () => cockConsecutive.execute(value) },
    { group, name: 'opossum', run: () => opossum.fire() },

    { group: timeGroup, name: 'bare await fn()', run: () => value() },
    { group: timeGroup, name: 'nest-resilience', run: () => ourTimeWindow.execute(value) },
    { group: timeGroup, name: 'cockatiel', run: () => cockSampling.execute(value) },
    { group: timeGroup, name: 'opossum', run: () => opossum.fire() },

    { group: openGroup, name: 'bare await fn()', run: () => value() },
    { group: openGroup, name: 'nest-resilience', run: () => ourOpen.execute(value).catch(swallow) },
    { group: openGroup, name: 'cockatiel', run: () => cockOpen.execute(value).catch(swallow) },
    { group: openGroup, name: 'opossum', run: () => opossumOpen.fire().catch(swallow), iterations: 50_000 },
  ];
}
