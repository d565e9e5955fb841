import {
  InMemoryCircuitBreakerStateStore,
  type CircuitAcquireResult,
  type CircuitBreakerStateStore,
  type CircuitCallResult,
  type CircuitPermit,
  type CircuitPolicy,
  type CircuitSnapshot,
  type CircuitTransition,
} from '../../src/core.entry.js';

/** One call a store received, as the breaker made it. */
export interface StoreCall {
  readonly op: 'acquire' | 'record' | 'isolate' | 'close' | 'exportSnapshot' | 'importSnapshot';
  readonly key: string;
  readonly now?: number;
  readonly result?: CircuitCallResult;
}

/**
 * A circuit store that answers asynchronously, as a shared store does (the state itself lives in an
 * in-memory store), and records what it was asked. `failRecords` makes `record` reject, as a store that
 * lost its connection would; `isolateTurns` makes isolating slower than the other operations.
 */
export class AsyncCircuitStore implements CircuitBreakerStateStore {
  readonly calls: StoreCall[] = [];
  failRecords = false;
  /** Microtask turns `isolate` takes, against one for every other operation (a slower write). */
  isolateTurns = 1;
  private readonly inner = new InMemoryCircuitBreakerStateStore();

  async acquire(key: string, policy: CircuitPolicy, now: number): Promise<CircuitAcquireResult> {
    this.calls.push({ op: 'acquire', key, now });
    await Promise.resolve();
    return this.inner.acquire(key, policy, now);
  }

  async record(
    key: string,
    policy: CircuitPolicy,
    permit: CircuitPermit,
    result: CircuitCallResult,
    now: number,
  ): Promise<CircuitTransition | undefined> {
    this.calls.push({ op: 'record', key, now, result });
    await Promise.resolve();
    if (this.failRecords) throw new Error('store unavailable');
    return this.inner.record(key, policy, permit, result, now);
  }

  async isolate(key: string, policy: CircuitPolicy, now: number): Promise<CircuitTransition | undefined> {
    this.calls.push({ op: 'isolate', key, now });
    for (let i = 0; i < this.isolateTurns; i++) await Promise.resolve();
    return this.inner.isolate(key, policy, now);
  }

  async close(key: string, policy: CircuitPolicy, now: number): Promise<CircuitTransition | undefined> {
    this.calls.push({ op: 'close', key, now });
    await Promise.resolve();
    return this.inner.close(key, policy, now);
  }

  async exportSnapshot(key: string, policy: CircuitPolicy): Promise<CircuitSnapshot> {
    this.calls.push({ op: 'exportSnapshot', key });
    await Promise.resolve();
    return this.inner.exportSnapshot(key, policy);
  }

  async importSnapshot(key: string, policy: CircuitPolicy, snapshot: CircuitSnapshot): Promise<void> {
    this.calls.push({ op: 'importSnapshot', key });
    await Promise.resolve();
    this.inner.importSnapshot(key, policy, snapshot);
  }
}
