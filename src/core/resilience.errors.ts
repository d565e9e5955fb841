const RESILIENCE_ERROR = Symbol.for('nest-resilience.error');

/** Where a rejection came from: the pipeline and strategy that produced it. @publicApi */
export interface ResilienceErrorSource {
  /** The pipeline's name, when it has one. */
  readonly pipelineName?: string;
  /** The strategy's `name` option, when set. */
  readonly strategyName?: string;
}

/**
 * Base class of every error the engine produces. Each subclass carries a brand (on its prototype), so the
 * `is…Error` guards still work when two copies of the package are loaded.
 *
 * @publicApi
 */
export class ResilienceError extends Error {
  /** The pipeline and strategy that produced the error, when known. */
  source?: ResilienceErrorSource;

  constructor(message?: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/**
 * Brands an error class: sets its `name` and the brand the guards check, on the prototype, so that
 * instances made by `createLightweightError` carry them too.
 */
function brand(type: { prototype: object; name: string }): void {
  Object.defineProperty(type.prototype, RESILIENCE_ERROR, { value: type.name });
  Object.defineProperty(type.prototype, 'name', { value: type.name, writable: true, configurable: true });
}

Object.defineProperty(ResilienceError.prototype, RESILIENCE_ERROR, { value: 'ResilienceError' });
Object.defineProperty(ResilienceError.prototype, 'name', {
  value: 'ResilienceError',
  writable: true,
  configurable: true,
});
/** Instances made without a captured stack show their name and message instead. */
Object.defineProperty(ResilienceError.prototype, 'stack', {
  configurable: true,
  get(this: Error): string {
    return `${this.name}: ${this.message}`;
  },
  set(this: Error, value: unknown) {
    Object.defineProperty(this, 'stack', { value, writable: true, configurable: true });
  },
});

/**
 * Makes an instance of an error class without running its constructor, so no stack trace is captured.
 * A rejection on a hot path (an open circuit) would otherwise spend most of its time capturing a stack
 * that only shows library internals. The instance is `instanceof` the class, has its brand, `name`,
 * `message` and the given fields; its `stack` is its name and message.
 *
 * @internal
 */
export function createLightweightError<E extends ResilienceError>(
  type: { prototype: E },
  message: string,
  fields: Partial<E>,
): E {
  const error = Object.create(type.prototype) as E;
  error.message = message;
  return Object.assign(error, fields);
}

function hasKind(error: unknown, kind: string): boolean {
  return typeof error === 'object' && error !== null && (error as Record<symbol, unknown>)[RESILIENCE_ERROR] === kind;
}

/** Whether `error` is any error of this library (a `ResilienceError`). @publicApi */
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
    super(message, options);
  }
}
brand(BrokenCircuitError);

/**
 * Thrown while a circuit is isolated by hand (`CircuitBreakerManualControl.isolate()`). It is a
 * `BrokenCircuitError` (as Polly's `IsolatedCircuitException : BrokenCircuitException`): one `catch` or
 * `isBrokenCircuitError` covers both; `isIsolatedCircuitError` tells them apart.
 *
 * @publicApi
 */
export class IsolatedCircuitError extends BrokenCircuitError {
  constructor(message = 'The circuit is manually held open and is not allowing calls.') {
    super(message);
  }
  /** An isolated circuit has no known re-open time. */
  declare readonly retryAfter: undefined;
}
brand(IsolatedCircuitError);

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
    super(options?.message ?? `The operation did not complete within the ${timeout} ms timeout.`, options);
  }
}

brand(TimeoutRejectedError);

const DEADLINE_EXCEEDED = Symbol.for('nest-resilience.deadline-exceeded');

/**
 * Thrown when a call's deadline (`ResilienceContextOptions.deadline`: the budget its caller had left)
 * had passed before the call started, or ended it. It is a `TimeoutRejectedError` — `isTimeoutRejectedError`
 * and every mapping of timeouts (HTTP 504, the RPC 504 payload) cover it; `isDeadlineExceededError`
 * tells it apart. `timeout` is the budget the call started with (0 when it was spent already).
 *
 * @publicApi
 */
export class DeadlineExceededError extends TimeoutRejectedError {
  constructor(
    /** The budget the call had when it started, in milliseconds; 0 when the deadline had passed already. */
    budget: number,
    options?: { cause?: unknown; message?: string },
  ) {
    super(budget, {
      cause: options?.cause,
      message:
        options?.message ??
        (budget > 0
          ? `The operation did not complete within its deadline (${budget} ms).`
          : 'The deadline had passed before the operation started.'),
    });
  }
}
// A subtype of TimeoutRejectedError: it keeps that brand and adds its own mark.
Object.defineProperty(DeadlineExceededError.prototype, DEADLINE_EXCEEDED, { value: true });
Object.defineProperty(DeadlineExceededError.prototype, 'name', {
  value: 'DeadlineExceededError',
  writable: true,
  configurable: true,
});

/**
 * Why a limiter turned a call away: `limit` — no permit and no room to wait; `shed` — the call's
 * criticality decided (a `sheddable` call over its share of the limit, or a queued call that gave its
 * place to a `critical` one); `adaptive-throttling` — adaptive throttling shed it locally while the
 * dependency refuses requests.
 *
 * @publicApi
 */
export type RateLimiterRejectionReason = 'limit' | 'shed' | 'adaptive-throttling';

/** Thrown when a rate limiter, a concurrency limiter or the adaptive concurrency limiter rejects a call. @publicApi */
export class RateLimiterRejectedError extends ResilienceError {
  constructor(
    message = 'The operation could not be executed because it was rejected by the rate limiter.',
    /** Milliseconds after which a new attempt may succeed, when the limiter knows. */
    readonly retryAfter?: number,
    /** Why the call was turned away, when the limiter says (`limit`, `shed` or `adaptive-throttling`). */
    readonly reason?: RateLimiterRejectionReason,
  ) {
    super(message);
  }
}
brand(RateLimiterRejectedError);

/** One problem found in a set of options. @publicApi */
export interface ValidationIssue {
  /** Where the option sits, e.g. `strategies[0] (retry).maxRetryAttempts`. */
  readonly path: string;
  /** The value that was given. */
  readonly value: unknown;
  /** The rule it breaks, e.g. `must be an integer >= 0`. */
  readonly rule: string;
}

/**
 * Thrown by `build()` (and by the Nest module at start-up) when options are invalid. It lists every
 * problem at once, never just the first.
 *
 * @publicApi
 */
export class ResilienceValidationError extends ResilienceError {
  constructor(
    /** Every problem found: path, value and the rule it breaks. */
    readonly issues: readonly ValidationIssue[],
    title = 'Invalid resilience options',
  ) {
    super(
      `${title} (${issues.length} problem${issues.length === 1 ? '' : 's'}):\n` +
        issues.map((i) => `  - ${i.path}: ${describeValue(i.value)} ${i.rule}`).join('\n'),
    );
  }
}
brand(ResilienceValidationError);

function describeValue(value: unknown): string {
  if (typeof value === 'function') return `[function ${value.name || 'anonymous'}]`;
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'bigint') return `${value}n`;
  // Booleans and null read the same as JSON below; NaN and ±Infinity would not.
  if (value === undefined || typeof value === 'number') return String(value);
  try {
    const json = JSON.stringify(value);
    return json.length > 80 ? `${json.slice(0, 77)}...` : json;
  } catch {
    return Object.prototype.toString.call(value);
  }
}

/** Thrown for a pipeline name the registry does not know; lists the names it does. @publicApi */
export class UnknownPipelineError extends ResilienceError {
  constructor(
    /** The name that was asked for. */
    readonly pipelineName: string,
    /** The names the registry knows. */
    readonly knownNames: readonly string[],
  ) {
    super(
      `No resilience pipeline is named "${pipelineName}". Known pipelines: ${knownNames.length ? knownNames.map((n) => `"${n}"`).join(', ') : '(none)'}.`,
    );
  }
}
brand(UnknownPipelineError);

/** True for an open or half-open circuit's rejection, and for an isolated one (a subclass). @publicApi */
export function isBrokenCircuitError(error: unknown): error is BrokenCircuitError {
  return hasKind(error, 'BrokenCircuitError') || hasKind(error, 'IsolatedCircuitError');
}
/** Whether `error` is an `IsolatedCircuitError` (the circuit is held open by hand). @publicApi */
export function isIsolatedCircuitError(error: unknown): error is IsolatedCircuitError {
  return hasKind(error, 'IsolatedCircuitError');
}
/** Whether `error` is a `TimeoutRejectedError`. @publicApi */
export function isTimeoutRejectedError(error: unknown): error is TimeoutRejectedError {
  return hasKind(error, 'TimeoutRejectedError');
}
/** Whether `error` is a `DeadlineExceededError` (also a `TimeoutRejectedError`). @publicApi */
export function isDeadlineExceededError(error: unknown): error is DeadlineExceededError {
  return typeof error === 'object' && error !== null && (error as Record<symbol, unknown>)[DEADLINE_EXCEEDED] === true;
}
/** Whether `error` is a `RateLimiterRejectedError`. @publicApi */
export function isRateLimiterRejectedError(error: unknown): error is RateLimiterRejectedError {
  return hasKind(error, 'RateLimiterRejectedError');
}
/** Whether `error` is a `ResilienceValidationError` (invalid options). @publicApi */
export function isResilienceValidationError(error: unknown): error is ResilienceValidationError {
  return hasKind(error, 'ResilienceValidationError');
}
/** Whether `error` is an `UnknownPipelineError`. @publicApi */
export function isUnknownPipelineError(error: unknown): error is UnknownPipelineError {
  return hasKind(error, 'UnknownPipelineError');
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
  return Number.isFinite(value) && (value as number) >= 0 ? (value as number) : undefined;
}
