import type { CircuitHealth, CircuitMetricsSnapshot } from './circuit-state.model.js';
import type { HealthMetrics } from './health.metrics.js';

/** Opens after `threshold` failures in a row; any success starts the count again. @internal */
export class ConsecutiveFailuresMetrics implements HealthMetrics {
  private consecutiveFailures = 0;

  constructor(private readonly threshold: number) {}

  success(): void {
    this.consecutiveFailures = 0;
  }

  failure(): void {
    this.consecutiveFailures++;
  }

  shouldBreak(): boolean {
    return this.consecutiveFailures >= this.threshold;
  }

  health(): CircuitHealth {
    const n = this.consecutiveFailures;
    return { throughput: n, failures: n, failureRatio: n === 0 ? 0 : 1 };
  }

  reset(): void {
    this.consecutiveFailures = 0;
  }

  toSnapshot(): CircuitMetricsSnapshot {
    return { kind: 'consecutive', consecutiveFailures: this.consecutiveFailures };
  }

  restore(snapshot: { consecutiveFailures: number }): void {
    this.consecutiveFailures = snapshot.consecutiveFailures;
  }
}
