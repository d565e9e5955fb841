const RESILIENCE_ERROR = Symbol.for('nest-resilience.error');

/** Where a rejection came from: the pipeline and strategy that produced it. @publicApi */
export interface ResilienceErrorSource {
  readonly pipelineName?: string;
  readonly strategyName?: string;
}

/**
 * Base class of every error the engine produces. Each subclass carries a brand, so the `is…Error` guards
 * still work when two copies of the package are loaded.
 *
 * @publicApi
 */
export class ResilienceError extends Error {
  /** @internal */
  readonly [RESILIENCE_ERROR]: string;
  /** The pipeline and strategy that produced the error, when known. */
  source?: ResilienceErrorSource;

  constructor(kind: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this[RESILIENCE_ERROR] = kind;
    this.name = kind;
  }
}

function hasKind(error: unknown, kind: string): boolean {
  return typeof error === 'object' && error !== null && (error as Record<symbol, unknown>)[RESILIENCE_ERROR] === kind;
}

/** @publicApi */
export function isResilienceError(error: unknown): error is ResilienceError {
  return typeof error === 'object' && error !== null && RESILIENCE_ERROR in error;
}

/**
 * Thrown when a circuit breaker rejects a call because the circuit is open (or half-open with no probe
 * permit left). `retryAfter` says in how many milliseconds a call may be admitted again; `cause` is the
 * failure that opened the circuit.
 *
 * @publicApi
 */
export class BrokenCircuitError extends ResilienceError {
  constructor(
    message = 'The circuit is now open and is not allowing calls.',
    /** Milliseconds until the circuit may admit a call again, when known. */
    readonly retryAfter?: number,
    options?: { cause?: unknown },
  ) {
    super('BrokenCircuitError', message, options);
  }
}

/** Thrown while a circuit is isolated by hand (`CircuitBreakerManualControl.isolate()`). @publicApi */
export class IsolatedCircuitError extends ResilienceError {
  constructor(message = 'The circuit is manually held open and is not allowing calls.') {
    super('IsolatedCircuitError', message);
  }
  /** An isolated circuit has no known re-open time. */
  readonly retryAfter: undefined;
}

/**
 * Thrown by the timeout strategy when its timeout ended the call. `cause` is the error the callback
 * ended with (usually the abort reason).
 *
 * @publicApi
 */
export class TimeoutRejectedError extends ResilienceError {
  constructor(
    /** The timeout that elapsed, in milliseconds. */
    readonly timeout: number,
    options?: { cause?: unknown; message?: string },
  ) {
    super(
      'TimeoutRejectedError',
      options?.message ?? `The operation did not complete within the ${timeout} ms timeout.`,
      options,
    );
  }
}

/** Thrown when a rate limiter or concurrency limiter rejects a call. @publicApi */
export class RateLimiterRejectedError extends ResilienceError {
  constructor(
    message = 'The operation could not be executed because it was rejected by the rate limiter.',
    /** Milliseconds after which a new attempt may succeed, when the limiter knows. */
    readonly retryAfter?: number,
  ) {
    super('RateLimiterRejectedError', message);
  }
}

/** @publicApi */
export function isBrokenCircuitError(error: unknown): error is BrokenCircuitError {
  return hasKind(error, 'BrokenCircuitError');
}
/** @publicApi */
export function isIsolatedCircuitError(error: unknown): error is IsolatedCircuitError {
  return hasKind(error, 'IsolatedCircuitError');
}
/** @publicApi */
export function isTimeoutRejectedError(error: unknown): error is TimeoutRejectedError {
  return hasKind(error, 'TimeoutRejectedError');
}
/** @publicApi */
export function isRateLimiterRejectedError(error: unknown): error is RateLimiterRejectedError {
  return hasKind(error, 'RateLimiterRejectedError');
}

/**
 * True for the errors that report cancellation rather than a fault: a DOM `AbortError`, Node's
 * `ABORT_ERR`, axios' `ERR_CANCELED`. Cancellation is never retried and never counts as a failure.
 *
 * @publicApi
 */
export function isCancellationError(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { name, code } = error as { name?: unknown; code?: unknown };
  return name === 'AbortError' || code === 'ABORT_ERR' || code === 'ERR_CANCELED';
}

/**
 * Reads a `retryAfter` (milliseconds) carried by an error, as `BrokenCircuitError`, `RateLimiterRejectedError`
 * and any user error with a finite, non-negative numeric `retryAfter` property do.
 *
 * @publicApi
 */
export function getRetryAfter(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const value = (error as { retryAfter?: unknown }).retryAfter;
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;
}
