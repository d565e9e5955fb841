import { timeout, TimeoutStrategy as CockatielTimeoutStrategy } from 'cockatiel';
import CircuitBreaker from 'opossum';
import { ResiliencePipelineBuilder, type TimeoutMode } from '../src/index.js';
import type { BenchCase, BenchScenario } from './bench.harness.js';
import { bareCase, value } from './reference.bench.js';

const TIMEOUT = 10_000;

/** opossum's breaker with its timeout, as configured out of the box. */
export function opossumBreaker<R>(fn: () => Promise<R>): CircuitBreaker<[], R> {
  return new CircuitBreaker(fn, { timeout: TIMEOUT });
}

/** opossum with its rolling percentiles and snapshots off: the cheapest way to run it. */
export function leanOpossumBreaker<R>(fn: () => Promise<R>): CircuitBreaker<[], R> {
  return new CircuitBreaker(fn, { timeout: TIMEOUT, rollingPercentilesEnabled: false, enableSnapshots: false });
}

export const opossumCases: readonly BenchCase[] = [
  {
    name: 'opossum (breaker + timeout)',
    shareKey: 'opossum-timeout',
    setup: () => {
      const breaker = opossumBreaker(value);
      return () => breaker.fire();
    },
  },
  {
    name: 'opossum, lean (no percentiles, no snapshots)',
    shareKey: 'opossum-lean-timeout',
    setup: () => {
      const breaker = leanOpossumBreaker(value);
      return () => breaker.fire();
    },
  },
];

function timeoutScenario(mode: TimeoutMode): BenchScenario {
  return {
    id: `timeout-${mode}`,
    title: `timeout (${mode}), success`,
    cases: [
      bareCase,
      {
        name: 'nest-resilience',
        setup: () => {
          const pipeline = new ResiliencePipelineBuilder().addTimeout({ timeout: TIMEOUT, mode }).build();
          return () => pipeline.execute(value);
        },
      },
      {
        name: 'cockatiel',
        setup: () => {
          const policy = timeout(
            TIMEOUT,
            mode === 'aggressive' ? CockatielTimeoutStrategy.Aggressive : CockatielTimeoutStrategy.Cooperative,
          );
          return () => policy.execute(value);
        },
      },
      ...opossumCases,
    ],
  };
}

export function timeoutScenarios(): BenchScenario[] {
  return [timeoutScenario('aggressive'), timeoutScenario('cooperative')];
}
