import type { CircuitHealth, CircuitMetricsSnapshot } from './circuit-state.model.js';
import { toHealth, type HealthMetrics } from './health.metrics.js';

/** Buckets per sampling duration, as in Polly's `RollingHealthMetrics`. @internal */
export const TIME_WINDOW_BUCKETS = 10;

interface Bucket {
  readonly startedAt: number;
  successes: number;
  failures: number;
}

/**
 * The failure ratio over a sliding time window (Polly v8 semantics): buckets of a tenth of the sampling
 * duration are created lazily, at the first event after the current one's time ran out, and dropped
 * once they are a sampling duration old. At most 11 buckets exist, whatever the traffic.
 *
 * @internal
 */
export class TimeWindowMetrics implements HealthMetrics {
  private buckets: Bucket[] = [];
  private readonly bucketDuration: number;

  constructor(
    private readonly kind: 'time-window' | 'slow-call',
    private readonly samplingDuration: number,
    private readonly failureRatio: number,
    private readonly minimumThroughput: number,
  ) {
    this.bucketDuration = samplingDuration / TIME_WINDOW_BUCKETS;
  }

  success(now: number): void {
    this.current(now).successes++;
  }

  failure(now: number): void {
    this.current(now).failures++;
  }

  shouldBreak(now: number): boolean {
    const { throughput, failureRatio } = this.health(now);
    return throughput >= this.minimumThroughput && failureRatio >= this.failureRatio;
  }

  health(now: number): CircuitHealth {
    this.current(now);
    let successes = 0;
    let failures = 0;
    for (const b of this.buckets) {
      successes += b.successes;
      failures += b.failures;
    }
    return toHealth(successes + failures, failures);
  }

  reset(): void {
    this.buckets = [];
  }

  toSnapshot(): CircuitMetricsSnapshot {
    return { kind: this.kind, windows: this.buckets.map((b) => [b.startedAt, b.successes, b.failures] as const) };
  }

  restore(snapshot: { windows: readonly (readonly [number, number, number])[] }): void {
    this.buckets = snapshot.windows.map(([startedAt, successes, failures]) => ({ startedAt, successes, failures }));
  }

  private current(now: number): Bucket {
    const buckets = this.buckets;
    let last = buckets[buckets.length - 1];
    if (last === undefined || now - last.startedAt >= this.bucketDuration) {
      last = { startedAt: now, successes: 0, failures: 0 };
      buckets.push(last);
    }
    while (now - buckets[0].startedAt >= this.samplingDuration) buckets.shift();
    return last;
  }
}
