import type {
  CircuitAcquireResult,
  CircuitCallResult,
  CircuitPermit,
  CircuitPolicy,
  CircuitSnapshot,
  CircuitTransition,
} from './circuit-state.model.js';

/** A value now, or a promise of it: in-memory stores answer synchronously, shared stores asynchronously. @publicApi */
export type MaybePromise<T> = T | Promise<T>;

/**
 * Where circuit state lives, keyed by circuit. Each operation is atomic for its key: a store shared by
 * many processes must decide admission and apply an outcome in one step (e.g. one Lua script), so that a
 * half-open circuit hands out exactly `permittedCallsInHalfOpen` probe permits fleet-wide and an opening
 * is seen by every process on its next call.
 *
 * Stores may answer synchronously; the breaker then adds no promise hop of its own.
 *
 * @publicApi
 */
export interface CircuitBreakerStateStore {
  /** Decides whether a call may run, applying any lazy transition (open → half-open). */
  acquire(key: string, policy: CircuitPolicy, now: number): MaybePromise<CircuitAcquireResult>;
  /** Applies the outcome of a call run under `permit`; returns the transition it caused, if any. */
  record(
    key: string,
    policy: CircuitPolicy,
    permit: CircuitPermit,
    result: CircuitCallResult,
    now: number,
  ): MaybePromise<CircuitTransition | undefined>;
  /** Holds the circuit open until `close`. */
  isolate(key: string, policy: CircuitPolicy, now: number): MaybePromise<CircuitTransition | undefined>;
  /** Closes the circuit and resets its measurements. */
  close(key: string, policy: CircuitPolicy, now: number): MaybePromise<CircuitTransition | undefined>;
  /** The circuit's state (a closed, empty circuit if the store has none). */
  exportSnapshot(key: string, policy: CircuitPolicy): MaybePromise<CircuitSnapshot>;
  /** Replaces the circuit's state; permits granted before become void. */
  importSnapshot(key: string, policy: CircuitPolicy, snapshot: CircuitSnapshot): MaybePromise<void>;
}
