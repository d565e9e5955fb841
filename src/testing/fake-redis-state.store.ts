import type { CircuitBreakerStateStore } from '../core/circuit-breaker/circuit-breaker-state-store.interface.js';
import type {
  CircuitAcquireResult,
  CircuitCallResult,
  CircuitPermit,
  CircuitPolicy,
  CircuitSnapshot,
  CircuitTransition,
} from '../core/circuit-breaker/circuit-state.model.js';
import { InMemoryCircuitBreakerStateStore } from '../core/circuit-breaker/in-memory-circuit-breaker-state.store.js';

/** Options of `FakeRedisStateStore`. @publicApi */
export interface FakeRedisStateStoreOptions {
  /** Namespaces the keys, as the Redis store's `keyPrefix` does. Default `test`. */
  keyPrefix?: string;
}

/**
 * A stand-in for the Redis circuit store (`RedisCircuitBreakerStateStore`) in tests, with no Redis server:
 * it gives the same answers (it passes the same store contract), asynchronously as over a network, under
 * the same keys (`<keyPrefix>:cb:{<circuit key>}`), and its circuits are shared by every breaker, pipeline
 * and application given the same instance — as the instances of an application share one Redis. Give one
 * instance to two applications (`store` of `ResilienceModule.forRoot`, or `CIRCUIT_BREAKER_STATE_STORE`
 * overridden) to test that an opening in one is seen by the other. Snapshots come out as copies, as they
 * would from Redis. What it does not model: outages (the Redis store's outage modes) and latency.
 *
 * @publicApi
 */
export class FakeRedisStateStore implements CircuitBreakerStateStore {
  private readonly prefix: string;
  private readonly circuits = new InMemoryCircuitBreakerStateStore();
  private operations = 0;

  constructor(options: FakeRedisStateStoreOptions = {}) {
    this.prefix = options.keyPrefix ?? 'test';
  }

  /** Operations answered so far: the round trips the Redis store would make at most. */
  get roundTrips(): number {
    return this.operations;
  }

  /** The Redis key of a circuit, as the Redis store names it: `<keyPrefix>:cb:{<circuit key>}`. */
  keyFor(circuitKey: string): string {
    return `${this.prefix}:cb:{${circuitKey}}`;
  }

  /** The Redis keys of the circuits it holds. */
  keys(): string[] {
    return [...this.circuits.keys()];
  }

  /** Forgets every circuit (Redis' `FLUSHALL`): each starts closed on its next call. */
  flushAll(): void {
    for (const key of this.keys()) this.circuits.delete(key);
  }

  acquire(key: string, policy: CircuitPolicy, now: number): Promise<CircuitAcquireResult> {
    return this.answer(() => this.circuits.acquire(this.keyFor(key), policy, now));
  }

  record(
    key: string,
    policy: CircuitPolicy,
    permit: CircuitPermit,
    result: CircuitCallResult,
    now: number,
  ): Promise<CircuitTransition | undefined> {
    return this.answer(() => this.circuits.record(this.keyFor(key), policy, permit, result, now));
  }

  isolate(key: string, policy: CircuitPolicy, now: number): Promise<CircuitTransition | undefined> {
    return this.answer(() => this.circuits.isolate(this.keyFor(key), policy, now));
  }

  close(key: string, policy: CircuitPolicy, now: number): Promise<CircuitTransition | undefined> {
    return this.answer(() => this.circuits.close(this.keyFor(key), policy, now));
  }

  exportSnapshot(key: string, policy: CircuitPolicy): Promise<CircuitSnapshot> {
    return this.answer(() => structuredClone(this.circuits.exportSnapshot(this.keyFor(key), policy)));
  }

  importSnapshot(key: string, policy: CircuitPolicy, snapshot: CircuitSnapshot): Promise<void> {
    return this.answer(() => this.circuits.importSnapshot(this.keyFor(key), policy, structuredClone(snapshot)));
  }

  /** One atomic operation (as one Lua script is), answered on a later turn (as a reply over a socket is). */
  private async answer<T>(operation: () => T): Promise<T> {
    this.operations++;
    await Promise.resolve();
    return operation();
  }
}
