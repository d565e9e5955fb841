import {
  getHttpRetryAfter,
  getHttpStatus,
  handleHttpFailure,
  handleRetryableHttpFailure,
  HTTP_REQUEST_INFO,
  OptionsValidator,
  type CircuitBreakerConfig,
  type HttpRequestInfo,
  type RateLimiterConfig,
  type RetryConfig,
  type TimeoutConfig,
  type TimeProvider,
} from '../../core/index.js';
import { type ConfigData, type PipelineConfig } from '../../config/index.js';
import { checkAttemptTimeout, coerceStandardPipelineOptions } from '../options/standard-pipeline.options.js';

// The request info and the two HTTP predicates live in the core (they need no HTTP library), so that
// configuration can name them (`http-failure`, `http-retryable`) without this module being loaded.
export { HTTP_REQUEST_INFO, handleHttpFailure, handleRetryableHttpFailure, type HttpRequestInfo };

/** GET, HEAD, OPTIONS, TRACE, PUT and DELETE may be repeated (RFC 9110 §9.2.2); POST, PATCH, CONNECT may not. @publicApi */
export const IDEMPOTENT_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE', 'PUT', 'DELETE']);

/**
 * The standard pipeline of Microsoft.Extensions.Http.Resilience, as options: rate limiter → total
 * timeout → retry (exponential, jitter, Retry-After) → circuit breaker → attempt timeout. Every part may
 * be overridden, or turned off with `false`. As all module configuration, durations and numbers may be
 * strings (`"2s"`, `"00:00:30"`, `"PT30S"`, `"3"`): they are read before any rule is checked.
 *
 * @publicApi
 */
export interface StandardHttpPipelineOptions {
  /** Default: 1,000 concurrent requests, no queue. */
  rateLimiter?: ConfigData<RateLimiterConfig> | false;
  /** Default 30000 ms. */
  totalTimeout?: ConfigData<TimeoutConfig> | false;
  /** Default: 3 retries, exponential from 2 s with jitter, honouring `Retry-After`, at most 30 s apart. */
  retry?: ConfigData<RetryConfig> | false;
  /** Default: opens at 10 % failures over 30 s with at least 100 requests, for 5 s. */
  circuitBreaker?: ConfigData<CircuitBreakerConfig> | false;
  /** Default 10000 ms. */
  attemptTimeout?: ConfigData<TimeoutConfig> | false;
}

/** The standard options once their strings are read (what the rules and the registry see). */
interface CoercedHttpOptions {
  rateLimiter?: RateLimiterConfig | false;
  totalTimeout?: TimeoutConfig | false;
  retry?: RetryConfig | false;
  circuitBreaker?: CircuitBreakerConfig | false;
  attemptTimeout?: TimeoutConfig | false;
}

/** The standard pipeline's defaults (Microsoft.Extensions.Http.Resilience's). @publicApi */
export const STANDARD_HTTP_PIPELINE_DEFAULTS = {
  rateLimiter: { kind: 'concurrency', permitLimit: 1_000, queueLimit: 0 },
  totalTimeout: 30_000,
  retry: { maxRetryAttempts: 3, backoffType: 'exponential', delay: 2_000, useJitter: true, maxDelay: 30_000 },
  circuitBreaker: {
    kind: 'time-window',
    failureRatio: 0.1,
    minimumThroughput: 100,
    samplingDuration: 30_000,
    breakDuration: 5_000,
  },
  attemptTimeout: 10_000,
} as const satisfies Required<{
  [K in keyof StandardHttpPipelineOptions]: Exclude<StandardHttpPipelineOptions[K], false>;
}>;

/** The timeout in ms, or `undefined` when off or unreadable (validation reports the value itself). */
function timeoutOf(t: TimeoutConfig | false | undefined, fallback: number): number | undefined {
  if (t === false) return undefined;
  if (t === undefined) return fallback;
  const ms: unknown = typeof t === 'object' && t !== null ? t.timeout : t;
  return typeof ms === 'number' ? ms : undefined;
}

/**
 * The standard pipeline as a `PipelineConfig` (so the registry validates and builds it), after reading
 * the strings of its options and checking the cross-option rules on the values read: attempt timeout ≤
 * total timeout, sampling duration ≥ 2 × attempt timeout.
 *
 * @publicApi
 */
export function standardHttpPipeline(data: StandardHttpPipelineOptions = {}, path = 'http'): PipelineConfig {
  const d = STANDARD_HTTP_PIPELINE_DEFAULTS;
  const options = coerceStandardPipelineOptions(data) as CoercedHttpOptions;
  const v = new OptionsValidator(path);
  const total = timeoutOf(options.totalTimeout, d.totalTimeout);
  const attempt = timeoutOf(options.attemptTimeout, d.attemptTimeout);
  const given = options.circuitBreaker;
  // Another kind of breaker keeps only the defaults that apply to every kind.
  const breaker: CircuitBreakerConfig | undefined =
    given === false
      ? undefined
      : given?.kind !== undefined && given.kind !== d.circuitBreaker.kind
        ? { breakDuration: d.circuitBreaker.breakDuration, ...given }
        : { ...d.circuitBreaker, ...given };
  checkAttemptTimeout(v, '', total, attempt, breaker);
  v.throwIfInvalid('Invalid standard HTTP pipeline');
  const retry =
    options.retry === false
      ? undefined
      : ({ ...d.retry, shouldHandle: handleRetryableHttpFailure, ...options.retry } as RetryConfig);
  return {
    rateLimiter: options.rateLimiter === false ? undefined : (options.rateLimiter ?? { ...d.rateLimiter }),
    totalTimeout: options.totalTimeout === false ? undefined : (options.totalTimeout ?? d.totalTimeout),
    retry,
    circuitBreaker: breaker ? { shouldHandle: handleHttpFailure, ...breaker } : undefined,
    timeout: options.attemptTimeout === false ? undefined : (options.attemptTimeout ?? d.attemptTimeout),
  };
}

/** Milliseconds a 429 or 503 response (or error) asks to wait, from its `Retry-After`. @internal */
export function retryAfterOf(value: unknown, now: number): number | undefined {
  const status = getHttpStatus(value);
  return status === 429 || status === 503 ? getHttpRetryAfter(value, now) : undefined;
}

/**
 * Records on a failed request's error the milliseconds its 429 or 503 `Retry-After` asks for (as
 * `error.retryAfter`, where the retry strategy and the caller read it) and returns them. An HTTP date
 * is read against `time`, the registry's clock, the one the retry delay then runs on.
 *
 * @internal
 */
export function exposeRetryAfter(error: unknown, time: TimeProvider): number | undefined {
  const retryAfter = retryAfterOf(error, time.now());
  if (retryAfter !== undefined && typeof error === 'object' && error !== null) {
    (error as { retryAfter?: number }).retryAfter = retryAfter;
    return retryAfter;
  }
  return undefined;
}
