import type { CircuitHealth, CircuitMetricsSnapshot } from './circuit-state.model.js';
import { toHealth, type HealthMetrics } from './health.metrics.js';

/** The failure ratio over the last `size` calls, in a fixed ring (memory: one byte per call). @internal */
export class CountWindowMetrics implements HealthMetrics {
  private readonly ring: Uint8Array;
  private next = 0;
  private count = 0;
  private failures = 0;

  constructor(
    private readonly size: number,
    private readonly failureRatio: number,
    private readonly minimumThroughput: number,
  ) {
    this.ring = new Uint8Array(size);
  }

  success(): void {
    this.push(0);
  }

  failure(): void {
    this.push(1);
  }

  shouldBreak(): boolean {
    return this.count >= this.minimumThroughput && this.failures / this.count >= this.failureRatio;
  }

  health(): CircuitHealth {
    return toHealth(this.count, this.failures);
  }

  reset(): void {
    this.ring.fill(0);
    this.next = 0;
    this.count = 0;
    this.failures = 0;
  }

  toSnapshot(): CircuitMetricsSnapshot {
    let outcomes = '';
    const start = this.count < this.size ? 0 : this.next;
    for (let i = 0; i < this.count; i++) outcomes += this.ring[(start + i) % this.size];
    return { kind: 'count-window', outcomes };
  }

  restore(snapshot: { outcomes: string }): void {
    this.reset();
    // The ring keeps the newest `size` outcomes of a longer snapshot.
    for (const c of snapshot.outcomes) this.push(c === '1' ? 1 : 0);
  }

  private push(value: 0 | 1): void {
    if (this.count === this.size) this.failures -= this.ring[this.next];
    else this.count++;
    this.ring[this.next] = value;
    this.failures += value;
    this.next = (this.next + 1) % this.size;
  }
}
