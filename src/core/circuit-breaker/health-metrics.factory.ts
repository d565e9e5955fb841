import type { CircuitBreakerKind, CircuitMetricsSnapshot, CircuitPolicy } from './circuit-state.model.js';
import { ConsecutiveFailuresMetrics } from './consecutive-failures.metrics.js';
import { CountWindowMetrics } from './count-window.metrics.js';
import type { HealthMetrics } from './health.metrics.js';
import { TimeWindowMetrics } from './time-window.metrics.js';

/** The metrics of a breaker kind, restored from a snapshot of the same kind. @internal */
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
