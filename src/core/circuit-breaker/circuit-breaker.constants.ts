/** Defaults. The time-window ones are Polly v8's. @publicApi */
export const DEFAULT_CIRCUIT_BREAKER_KIND = 'time-window';
/** Failure ratio that opens a ratio-kind circuit by default (Polly v8: 10 %). @publicApi */
export const DEFAULT_FAILURE_RATIO = 0.1;
/** Calls a ratio-kind circuit measures before its ratio counts, by default (Polly v8). @publicApi */
export const DEFAULT_MINIMUM_THROUGHPUT = 100;
/** Milliseconds of the `time-window` sampling window by default (Polly v8: 30 s). @publicApi */
export const DEFAULT_SAMPLING_DURATION = 30_000;
/** Milliseconds a circuit stays open by default (Polly v8: 5 s). @publicApi */
export const DEFAULT_BREAK_DURATION = 5_000;
/** Failures in a row that open a `consecutive` circuit by default. @publicApi */
export const DEFAULT_FAILURE_THRESHOLD = 5;
/** Calls a `count-window` circuit measures by default (resilience4j's sliding window size). @publicApi */
export const DEFAULT_WINDOW_SIZE = 100;
/** resilience4j's default slow-call threshold. @publicApi */
export const DEFAULT_SLOW_CALL_DURATION = 60_000;
/** Probes a half-open circuit lets through by default (Polly v8: one). @publicApi */
export const DEFAULT_PERMITTED_CALLS_IN_HALF_OPEN = 1;
/** How long a half-open circuit waits for its probes before treating them as failed. @publicApi */
export const DEFAULT_MAX_HALF_OPEN_WAIT = 30_000;
/** Largest count window: one byte of memory per call. @publicApi */
export const MAX_WINDOW_SIZE = 100_000;
