/** Defaults. The time-window ones are Polly v8's. @publicApi */
export const DEFAULT_CIRCUIT_BREAKER_KIND = 'time-window';
/** @publicApi */
export const DEFAULT_FAILURE_RATIO = 0.1;
/** @publicApi */
export const DEFAULT_MINIMUM_THROUGHPUT = 100;
/** @publicApi */
export const DEFAULT_SAMPLING_DURATION = 30_000;
/** @publicApi */
export const DEFAULT_BREAK_DURATION = 5_000;
/** @publicApi */
export const DEFAULT_FAILURE_THRESHOLD = 5;
/** @publicApi */
export const DEFAULT_WINDOW_SIZE = 100;
/** resilience4j's default slow-call threshold. @publicApi */
export const DEFAULT_SLOW_CALL_DURATION = 60_000;
/** @publicApi */
export const DEFAULT_PERMITTED_CALLS_IN_HALF_OPEN = 1;
/** How long a half-open circuit waits for its probes before treating them as failed. @publicApi */
export const DEFAULT_MAX_HALF_OPEN_WAIT = 30_000;
/** Largest count window: one byte of memory per call. @publicApi */
export const MAX_WINDOW_SIZE = 100_000;
