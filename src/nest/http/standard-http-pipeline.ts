import {
  getHttpRetryAfter,
  getHttpStatus,
  isTimeoutRejectedError,
  isTransientHttpStatus,
  isTransientNetworkError,
  OptionsValidator,
  ResiliencePropertyKey,
  type CircuitBreakerConfig,
  type ResilienceContext,
  type OutcomePredicate,
  type PipelineConfig,
  type RateLimiterConfig,
  type RetryConfig,
  type TimeoutConfig,
} from '../../core/index.js';

/** What the HTTP client tells its pipeline about the request being made. @publicApi */
export interface HttpRequestInfo {
  /** The request's method, upper case. */
  readonly method: string;
  /** The request's absolute URL. */
  readonly url: string;
  /** Safe methods, and unsafe ones marked idempotent (option or `Idempotency-Key` header). */
  readonly retryable: boolean;
  /** Extra statuses that count as failures (e.g. 404), besides the transient ones. */
  readonly failureStatusCodes: readonly number[];
}

/** The context property carrying `HttpRequestInfo`. @publicApi */
export const HTTP_REQUEST_INFO = new ResiliencePropertyKey<HttpRequestInfo>('nest-resilience.http.request');

/** GET, HEAD, OPTIONS, TRACE, PUT and DELETE may be repeated (RFC 9110 §9.2.2); POST, PATCH, CONNECT may not. @publicApi */
export const IDEMPOTENT_METHODS: ReadonlySet<string> = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE', 'PUT', 'DELETE']);

/**
 * A failure of an HTTP call: a transient one (network error, timeout, 408, 429, 5xx) or a status the
 * request lists in `failureStatusCodes`. What circuit breakers count.
 *
 * @publicApi
 */
export const handleHttpFailure: OutcomePredicate<unknown> = (args) => {
  const { outcome } = args;
  const context = contextOf(args);
  const value = outcome.ok ? outcome.value : outcome.error;
  if (!outcome.ok && (isTransientNetworkError(value) || isTimeoutRejectedError(value))) return true;
  const status = getHttpStatus(value);
  if (status === undefined) return false;
  return (
    isTransientHttpStatus(status) ||
    (context?.properties.get(HTTP_REQUEST_INFO)?.failureStatusCodes.includes(status) ?? false)
  );
};

/**
 * What an HTTP retry may repeat: a failure (as `handleHttpFailure`) of a request that may be repeated —
 * unsafe methods (POST, PATCH) only when marked idempotent.
 *
 * @publicApi
 */
export const handleRetryableHttpFailure: OutcomePredicate<unknown> = (args) => {
  const info = contextOf(args)?.properties.get(HTTP_REQUEST_INFO);
  if (info && !info.retryable) return false;
  return handleHttpFailure(args);
};

/**
 * The standard pipeline of Microsoft.Extensions.Http.Resilience, as options: rate limiter → total
 * timeout → retry (exponential, jitter, Retry-After) → circuit breaker → attempt timeout. Every part may
 * be overridden, or turned off with `false`.
 *
 * @publicApi
 */
export interface StandardHttpPipelineOptions {
  /** Default: 1,000 concurrent requests, no queue. */
  rateLimiter?: RateLimiterConfig | false;
  /** Default 30000 ms. */
  totalTimeout?: TimeoutConfig | false;
  /** Default: 3 retries, exponential from 2 s with jitter, honouring `Retry-After`, at most 30 s apart. */
  retry?: RetryConfig | false;
  /** Default: opens at 10 % failures over 30 s with at least 100 requests, for 5 s. */
  circuitBreaker?: CircuitBreakerConfig | false;
  /** Default 10000 ms. */
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

function timeoutOf(t: TimeoutConfig | false | undefined, fallback: number): number | undefined {
  if (t === false) return undefined;
  if (t === undefined) return fallback;
  return typeof t === 'number' ? t : t.timeout;
}

/**
 * The standard pipeline as a `PipelineConfig` (so the registry validates and builds it), after checking
 * the cross-option rules: attempt timeout ≤ total timeout, sampling duration ≥ 2 × attempt timeout.
 *
 * @publicApi
 */
export function standardHttpPipeline(options: StandardHttpPipelineOptions = {}, path = 'http'): PipelineConfig {
  const d = STANDARD_HTTP_PIPELINE_DEFAULTS;
  const v = new OptionsValidator(path);
  const total = timeoutOf(options.totalTimeout, d.totalTimeout);
  const attempt = timeoutOf(options.attemptTimeout, d.attemptTimeout);
  if (total !== undefined && attempt !== undefined && attempt > total) {
    v.add('attemptTimeout', attempt, `must be <= totalTimeout (${total})`);
  }
  const given = options.circuitBreaker;
  // Another kind of breaker keeps only the defaults that apply to every kind.
  const breaker: CircuitBreakerConfig | undefined =
    given === false
      ? undefined
      : given?.kind !== undefined && given.kind !== d.circuitBreaker.kind
        ? { breakDuration: d.circuitBreaker.breakDuration, ...given }
        : { ...d.circuitBreaker, ...given };
  const sampling = breaker && 'samplingDuration' in breaker ? breaker.samplingDuration : undefined;
  if (
    sampling !== undefined &&
    attempt !== undefined &&
    breaker?.kind !== 'consecutive' &&
    breaker?.kind !== 'count-window' &&
    sampling < 2 * attempt
  ) {
    v.add('circuitBreaker.samplingDuration', sampling, `must be >= 2 × attemptTimeout (${2 * attempt})`);
  }
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

/** Every strategy's predicate arguments carry the context; the shared predicate type only names the outcome. */
function contextOf(args: object): ResilienceContext | undefined {
  return (args as { context?: ResilienceContext }).context;
}

/** Milliseconds a 429 or 503 response (or error) asks to wait, from its `Retry-After`. @internal */
export function retryAfterOf(value: unknown, now: number): number | undefined {
  const status = getHttpStatus(value);
  return status === 429 || status === 503 ? getHttpRetryAfter(value, now) : undefined;
}
