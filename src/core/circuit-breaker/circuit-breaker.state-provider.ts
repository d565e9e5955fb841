import type { Outcome } from '../outcome/outcome.model.js';
import type { CircuitSnapshot, CircuitState } from './circuit-state.model.js';

/** What a state provider reads: one breaker. @internal */
export interface StateProviderTarget {
  readonly circuitState: CircuitState;
  readonly lastHandledOutcome: Outcome<unknown> | undefined;
  readonly circuitKey: string;
  exportSnapshot(): Promise<CircuitSnapshot>;
  importSnapshot(snapshot: CircuitSnapshot): Promise<void>;
}

/**
 * Reads the state of one circuit breaker (give it to exactly one `addCircuitBreaker`). `circuitState`
 * is what this process last saw; `exportSnapshot()` reads the store (the whole state, serialisable), and
 * `importSnapshot()` restores one — to survive a restart, or to carry state between stores.
 *
 * @publicApi
 */
export class CircuitBreakerStateProvider {
  private target: StateProviderTarget | undefined;

  /** True once a breaker uses this provider. */
  get isInitialized(): boolean {
    return this.target !== undefined;
  }

  /** The circuit's state as this process last saw it; `closed` before the first call. */
  get circuitState(): CircuitState {
    return this.target?.circuitState ?? 'closed';
  }

  /** The last outcome the breaker counted as a failure. */
  get lastHandledOutcome(): Outcome<unknown> | undefined {
    return this.target?.lastHandledOutcome;
  }

  /** The breaker's key in its store. */
  get circuitKey(): string | undefined {
    return this.target?.circuitKey;
  }

  /** Reads the circuit's whole state from its store, as a serialisable snapshot; rejects before a breaker uses it. */
  async exportSnapshot(): Promise<CircuitSnapshot> {
    return this.bound().exportSnapshot();
  }

  /**
   * Replaces the circuit's state in its store with `snapshot` (after a restart, or to move state between
   * stores); rejects before a breaker uses this provider.
   */
  async importSnapshot(snapshot: CircuitSnapshot): Promise<void> {
    return this.bound().importSnapshot(snapshot);
  }

  /** @internal */
  _bind(target: StateProviderTarget): void {
    if (this.target) throw new Error('This CircuitBreakerStateProvider is already used by another circuit breaker.');
    this.target = target;
  }

  private bound(): StateProviderTarget {
    if (!this.target) throw new Error('This CircuitBreakerStateProvider is not used by any circuit breaker yet.');
    return this.target;
  }
}
