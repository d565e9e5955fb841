import type {
  CircuitBreakerKind,
  CircuitHealth,
  CircuitMetricsSnapshot,
  CircuitPolicy,
} from '../circuit-state.model.js';
import { ConsecutiveFailuresMetrics } from './consecutive-failures.metrics.js';
import { CountWindowMetrics } from './count-window.metrics.js';
import { TimeWindowMetrics } from './time-window.metrics.js';

/** What a breaker kind measures and when it trips. @internal */
export interface HealthMetrics {
  success(now: number): void;
  failure(now: number): void;
  /** Whether the measurements (after a failure) call for opening the circuit. */
  shouldBreak(now: number): boolean;
  health(now: number): CircuitHealth;
  reset(): void;
  toSnapshot(): CircuitMetricsSnapshot;
}

/** @internal */
export function createHealthMetrics(policy: CircuitPolicy, snapshot?: CircuitMetricsSnapshot): HealthMetrics {
  const metrics = newMetrics(policy.kind, policy);
  if (snapshot && snapshot.kind === policy.kind) metrics.restore(snapshot as never);
  return metrics;
}

function newMetrics(kind: CircuitBreakerKind, policy: CircuitPolicy): HealthMetrics & { restore(s: never): void } {
  switch (kind) {
    case 'consecutive':
      return new ConsecutiveFailuresMetrics(policy.failureThreshold);
    case 'count-window':
      return new CountWindowMetrics(policy.windowSize, policy.failureRatio, policy.minimumThroughput);
    case 'time-window':
    case 'slow-call':
      return new TimeWindowMetrics(kind, policy.samplingDuration, policy.failureRatio, policy.minimumThroughput);
  }
}

/** @internal */
export function toHealth(throughput: number, failures: number): CircuitHealth {
  return { throughput, failures, failureRatio: throughput === 0 ? 0 : failures / throughput };
}
