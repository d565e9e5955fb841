/**
 * `closed`: calls flow and outcomes are measured. `open`: calls are rejected until the break ends.
 * `half-open`: a limited number of probe calls decide whether to close or open again. `isolated`: held
 * open by hand until closed by hand.
 *
 * @publicApi
 */
export type CircuitState = 'closed' | 'open' | 'half-open' | 'isolated';

/**
 * When to open: after N consecutive failures; when the failure ratio over a time window reaches a
 * threshold (Polly v8); the same over the last N calls; or when the ratio of failed *or slow* calls over
 * a time window does.
 *
 * @publicApi
 */
export type CircuitBreakerKind = 'consecutive' | 'time-window' | 'count-window' | 'slow-call';

/** How a finished call counts. `ignored` (cancellation, unhandled outcomes of a probe) never counts. @publicApi */
export type CircuitCallResult = 'success' | 'failure' | 'ignored';

/** The health a breaker measured, as seen when it opened. @publicApi */
export interface CircuitHealth {
  /** Calls measured (in the window, or since the last success for `consecutive`). */
  readonly throughput: number;
  /** Failed (or slow) calls among them. */
  readonly failures: number;
  /** `failures / throughput`, 0 when nothing was measured. */
  readonly failureRatio: number;
}

/** What `breakDurationGenerator` receives each time the circuit opens. @publicApi */
export interface BreakDurationGeneratorArguments {
  /** Failed calls measured when the circuit opened. */
  readonly failureCount: number;
  /** The failure ratio measured when the circuit opened (ratio kinds; 1 for `consecutive`). */
  readonly failureRatio: number;
  /** How many half-open periods in a row ended by opening again (0 on the first opening). */
  readonly halfOpenAttempts: number;
}

/**
 * The serialisable rules a store applies atomically. Every store, local or shared, gets the same policy,
 * so a shared store can run the whole state machine in one round trip.
 *
 * @publicApi
 */
export interface CircuitPolicy {
  /** When the circuit opens. */
  readonly kind: CircuitBreakerKind;
  /** `consecutive`: failures in a row that open the circuit. */
  readonly failureThreshold: number;
  /** Ratio kinds: the failure ratio (inclusive) that opens the circuit. */
  readonly failureRatio: number;
  /** Ratio kinds: calls that must be measured before the ratio counts. */
  readonly minimumThroughput: number;
  /** `time-window` and `slow-call`: the window, in milliseconds (10 buckets of a tenth each). */
  readonly samplingDuration: number;
  /** `count-window`: how many recent calls are measured. */
  readonly windowSize: number;
  /** How long the circuit stays open, in milliseconds. */
  readonly breakDuration: number;
  /** Probes a half-open circuit lets through. */
  readonly permittedCallsInHalfOpen: number;
  /** Successful probes needed to close the circuit. */
  readonly successThresholdInHalfOpen: number;
  /** How long a half-open circuit waits for its probes before treating them as failed, in milliseconds. */
  readonly maxHalfOpenWait: number;
  /** Computes the break when the circuit opens; runs in-process. */
  readonly breakDurationGenerator?: (args: BreakDurationGeneratorArguments) => number;
}

/** Permission to run one call, tagged with the state period it was granted in. @publicApi */
export interface CircuitPermit {
  /** Bumped by every transition: an outcome from an earlier period is not counted. */
  readonly generation: number;
  /** A half-open probe: its outcome decides the circuit's next state. */
  readonly probe: boolean;
}

/** Why a transition happened. @publicApi */
export type CircuitTransitionReason =
  | 'failure-threshold'
  | 'break-elapsed'
  | 'probe-failed'
  | 'probes-succeeded'
  | 'half-open-timeout'
  | 'manual-isolate'
  | 'manual-close'
  | 'restored';

/** One state change of a circuit, as a state store reports it. @publicApi */
export interface CircuitTransition {
  /** The state before. */
  readonly from: CircuitState;
  /** The state after. */
  readonly to: CircuitState;
  /** Why it changed. */
  readonly reason: CircuitTransitionReason;
  /** When the circuit opened: for how long, in milliseconds. */
  readonly breakDuration?: number;
  /** When the circuit opened on measured failures: the health that tripped it. */
  readonly health?: CircuitHealth;
}

/** The answer to "may this call run?". @publicApi */
export interface CircuitAcquireResult {
  /** Present when the call may run. */
  readonly permit?: CircuitPermit;
  /** The state after the decision. */
  readonly state: CircuitState;
  /** When rejected (not isolated): milliseconds until a call may be admitted again. */
  readonly retryAfter?: number;
  /** When rejected in half-open: the time by which the probes' verdict is due. */
  readonly verdictDueAt?: number;
  /** A transition the decision caused (open → half-open, or half-open → open after a hung probe). */
  readonly transition?: CircuitTransition;
}

/** Serialisable measurements of each breaker kind. @publicApi */
export type CircuitMetricsSnapshot =
  | { readonly kind: 'consecutive'; readonly consecutiveFailures: number }
  | {
      readonly kind: 'time-window' | 'slow-call';
      /** `[startedAt, successes, failures]` per bucket, oldest first. */
      readonly windows: readonly (readonly [number, number, number])[];
    }
  | {
      readonly kind: 'count-window';
      /** The measured calls, oldest first: `1` failure, `0` success. */
      readonly outcomes: string;
    };

/**
 * A circuit's whole state: what stores keep, what `exportSnapshot` returns and `importSnapshot` accepts.
 * Versioned so that a future shape can still read it.
 *
 * @publicApi
 */
export interface CircuitSnapshot {
  /** The snapshot format (`CIRCUIT_SNAPSHOT_VERSION`). */
  readonly version: 1;
  /** The circuit's state. */
  readonly state: CircuitState;
  /** Bumped by every transition; permits of an earlier generation are not counted. */
  readonly generation: number;
  /** `open`: when a probe may be admitted. */
  readonly blockedUntil: number;
  /** The length of the last break, in milliseconds. */
  readonly lastBreakDuration: number;
  /** `half-open`: when it started. */
  readonly halfOpenSince: number;
  /** Half-open periods in a row that ended by opening again. */
  readonly halfOpenAttempts: number;
  /** `half-open`: probes let through so far. */
  readonly probesIssued: number;
  /** `half-open`: probes that succeeded so far. */
  readonly probesSucceeded: number;
  /** When the last transition happened (milliseconds since the epoch, on the clock of the instance that made it). */
  readonly lastTransitionAt: number;
  /** The health measurements of the breaker's kind. */
  readonly metrics: CircuitMetricsSnapshot;
}

/** The current snapshot version. @publicApi */
export const CIRCUIT_SNAPSHOT_VERSION = 1;
