/** Polly's defaults: 3 retries, 2 s base delay, constant backoff, no jitter. @publicApi */
export const DEFAULT_RETRY_MAX_ATTEMPTS = 3;
/** Milliseconds of the base retry delay by default (Polly: 2 s). @publicApi */
export const DEFAULT_RETRY_DELAY = 2_000;
/** The backoff type by default (Polly: constant). @publicApi */
export const DEFAULT_RETRY_BACKOFF_TYPE = 'constant';
/** The jitter factor of constant and linear backoff: the delay varies by ±25 %. @internal */
export const RETRY_JITTER_FACTOR = 0.5;
/** Decorrelated-jitter V2 constants (Polly `RetryHelper`). @internal */
export const DECORRELATED_JITTER_P_FACTOR = 4;
/** @internal */
export const DECORRELATED_JITTER_RP_SCALING = 1 / 1.4;
