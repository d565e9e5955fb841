/** What a manual control drives: one breaker. @internal */
export interface ManualControlTarget {
  isolate(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Isolates (holds open) and closes circuit breakers by hand. One control may drive many breakers: give
 * the same instance to each. A breaker built after `isolate()` — or with a control created with
 * `{ isolated: true }` — starts isolated.
 *
 * ```ts
 * const control = new CircuitBreakerManualControl();
 * builder.addCircuitBreaker({ manualControl: control });
 * await control.isolate(); // every call now fails with IsolatedCircuitError
 * await control.close();   // closed again, measurements reset
 * ```
 *
 * @publicApi
 */
export class CircuitBreakerManualControl {
  private readonly targets = new Set<ManualControlTarget>();
  private isolated: boolean;

  constructor(options?: { isolated?: boolean }) {
    this.isolated = options?.isolated ?? false;
  }

  /** True between `isolate()` and `close()`. */
  get isIsolated(): boolean {
    return this.isolated;
  }

  /** Isolates every breaker this control drives. */
  async isolate(): Promise<void> {
    this.isolated = true;
    await Promise.all([...this.targets].map((t) => t.isolate()));
  }

  /** Closes every breaker this control drives and resets their measurements. */
  async close(): Promise<void> {
    this.isolated = false;
    await Promise.all([...this.targets].map((t) => t.close()));
  }

  /** @internal Called by each breaker built with this control; returns the function that detaches it. */
  _attach(target: ManualControlTarget): () => void {
    this.targets.add(target);
    return () => this.targets.delete(target);
  }
}
