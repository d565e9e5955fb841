import type { CircuitBreakerStateStore } from './circuit-breaker-state-store.interface.js';
import type {
  CircuitAcquireResult,
  CircuitCallResult,
  CircuitPermit,
  CircuitPolicy,
  CircuitSnapshot,
  CircuitTransition,
} from './circuit-state.model.js';
import { CircuitStateMachine } from './circuit-state.machine.js';

/**
 * The default store: circuit state in this process's memory, answered synchronously. One instance may be
 * shared by many breakers (each with its own key). Memory: one small state machine per key.
 *
 * @publicApi
 */
export class InMemoryCircuitBreakerStateStore implements CircuitBreakerStateStore {
  private readonly circuits = new Map<string, { policy: CircuitPolicy; machine: CircuitStateMachine }>();
  /** The last circuit used: a breaker's acquire and record hit the same key back to back. */
  private lastKey: string | undefined;
  private lastPolicy: CircuitPolicy | undefined;
  private lastMachine: CircuitStateMachine | undefined;

  acquire(key: string, policy: CircuitPolicy, now: number): CircuitAcquireResult {
    return this.machine(key, policy).acquire(now);
  }

  record(
    key: string,
    policy: CircuitPolicy,
    permit: CircuitPermit,
    result: CircuitCallResult,
    now: number,
  ): CircuitTransition | undefined {
    return this.machine(key, policy).record(permit, result, now);
  }

  isolate(key: string, policy: CircuitPolicy, now: number): CircuitTransition | undefined {
    return this.machine(key, policy).isolate(now);
  }

  close(key: string, policy: CircuitPolicy, now: number): CircuitTransition | undefined {
    return this.machine(key, policy).close(now);
  }

  exportSnapshot(key: string, policy: CircuitPolicy): CircuitSnapshot {
    return this.machine(key, policy).toSnapshot();
  }

  importSnapshot(key: string, policy: CircuitPolicy, snapshot: CircuitSnapshot): void {
    const machine = new CircuitStateMachine(policy, snapshot);
    this.circuits.set(key, { policy, machine });
    this.remember(key, policy, machine);
  }

  /** Forgets a circuit (its next call starts closed). */
  delete(key: string): boolean {
    this.lastKey = undefined;
    return this.circuits.delete(key);
  }

  /** The keys of the circuits this store holds. */
  keys(): IterableIterator<string> {
    return this.circuits.keys();
  }

  private machine(key: string, policy: CircuitPolicy): CircuitStateMachine {
    // Stryker disable next-line ConditionalExpression: equivalent — `false` skips the cache and finds the same machine in the map
    if (key === this.lastKey && policy === this.lastPolicy) return this.lastMachine!;
    const entry = this.circuits.get(key);
    // Stryker disable next-line ConditionalExpression: equivalent — `false` rebuilds the machine from its own snapshot under the same policy (lossless, permits stay valid): same state, more work
    if (entry !== undefined && entry.policy === policy) return this.remember(key, policy, entry.machine);
    // A new circuit, or the same key under a new policy (a reloaded pipeline): keep the state.
    const machine = new CircuitStateMachine(policy, entry?.machine.toSnapshot(), true);
    this.circuits.set(key, { policy, machine });
    return this.remember(key, policy, machine);
  }

  private remember(key: string, policy: CircuitPolicy, machine: CircuitStateMachine): CircuitStateMachine {
    this.lastKey = key;
    this.lastPolicy = policy;
    this.lastMachine = machine;
    return machine;
  }
}
