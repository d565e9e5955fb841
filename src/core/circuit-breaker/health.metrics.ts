import type { CircuitHealth, CircuitMetricsSnapshot } from './circuit-state.model.js';

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
export function toHealth(throughput: number, failures: number): CircuitHealth {
  return { throughput, failures, failureRatio: throughput === 0 ? 0 : failures / throughput };
}
