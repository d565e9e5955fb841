import { isCancellation } from './cancellation.rule.js';
import type { ResilienceContext } from '../context/resilience.context.js';
import type { Outcome } from './outcome.model.js';

/**
 * A predicate given by registered name (`"transient-network"`), by several names (handled when any
 * handles), or as a function when the configuration is code.
 *
 * @publicApi
 */
export type PredicateReference = string | readonly string[] | OutcomePredicate<unknown>;

/**
 * Decides whether an outcome is handled by a strategy (retried, counted as a failure, replaced by a
 * fallback…). Every strategy's `shouldHandle` receives an arguments object with the outcome and the
 * context, so these predicates plug into any of them. It may return a promise.
 *
 * @publicApi
 */
export type OutcomePredicate<T = unknown> = (args: OutcomePredicateArguments<T>) => boolean | PromiseLike<boolean>;

/** What every `shouldHandle` receives (strategies add more fields). @publicApi */
export interface OutcomePredicateArguments<T = unknown> {
  /** The result or error to judge. */
  readonly outcome: Outcome<T>;
  /** The context the outcome was produced under; the built-in predicates read its signal. */
  readonly context?: ResilienceContext;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type ErrorClass<E> = abstract new (...args: any[]) => E;

/**
 * Handles every error except cancellation (see `isCancellation`); results are never handled. The
 * default of retry, fallback, hedging and the circuit breaker (as in Polly, where
 * `OperationCanceledException` is excluded).
 *
 * @publicApi
 */
export function handleAllErrors({ outcome, context }: OutcomePredicateArguments<unknown>): boolean {
  return !outcome.ok && !isCancellation(outcome.error, context);
}

/**
 * Handles errors of a class (and its subclasses), optionally narrowed by a filter; or, given a plain
 * function, every error the function accepts. A cancellation (see `isCancellation`) is never handled.
 *
 * ```ts
 * handleError(HttpError, (e) => e.status >= 500)
 * handleError((e) => e instanceof TypeError)
 * ```
 *
 * @publicApi
 */
export function handleError(filter: (error: unknown) => boolean): OutcomePredicate<unknown>;
export function handleError<E>(type: ErrorClass<E>, filter?: (error: E) => boolean): OutcomePredicate<unknown>;
export function handleError<E>(
  typeOrFilter: ErrorClass<E> | ((error: unknown) => boolean),
  filter?: (error: E) => boolean,
): OutcomePredicate<unknown> {
  if (isClass(typeOrFilter)) {
    const type = typeOrFilter;
    return ({ outcome, context }) =>
      !outcome.ok &&
      outcome.error instanceof type &&
      !isCancellation(outcome.error, context) &&
      (!filter || filter(outcome.error));
  }
  const predicate = typeOrFilter;
  return ({ outcome, context }) => !outcome.ok && !isCancellation(outcome.error, context) && predicate(outcome.error);
}

/**
 * Handles results that match a predicate (or equal a value), e.g. an HTTP response with status 503.
 * Errors are not handled.
 *
 * @publicApi
 */
export function handleResult<T>(predicateOrValue: ((result: T) => boolean) | T): OutcomePredicate<T> {
  if (typeof predicateOrValue === 'function') {
    const predicate = predicateOrValue as (result: T) => boolean;
    return ({ outcome }) => outcome.ok && predicate(outcome.value);
  }
  return ({ outcome }) => outcome.ok && Object.is(outcome.value, predicateOrValue);
}

/** Handles an outcome when any of the predicates does (evaluated in order, short-circuiting). @publicApi */
export function anyOf<T>(...predicates: OutcomePredicate<T>[]): OutcomePredicate<T> {
  return (args) => {
    let index = 0;
    const next = (): boolean | PromiseLike<boolean> => {
      while (index < predicates.length) {
        const verdict = predicates[index++](args);
        if (verdict === true) return true;
        if (verdict !== false) return Promise.resolve(verdict).then((v) => v || next());
      }
      return false;
    };
    return next();
  };
}

/** The error codes of transient network faults (the seeds' `IsTransient`). @publicApi */
export const TRANSIENT_NETWORK_ERROR_CODES: ReadonlySet<string> = new Set([
  'ECONNRESET',
  'ETIMEDOUT',
  'ECONNREFUSED',
  'EPIPE',
  'EAI_AGAIN',
  'ECONNABORTED',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'ENETDOWN',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/**
 * True for an error that reports a transient network fault: one of `TRANSIENT_NETWORK_ERROR_CODES`
 * (looked up on the error and along its `cause` chain, as `fetch` nests them) or a "socket hang up".
 *
 * @publicApi
 */
export function isTransientNetworkError(error: unknown): boolean {
  for (let current = error, depth = 0; current && typeof current === 'object' && depth < 5; depth++) {
    const { code, message } = current as { code?: unknown; message?: unknown };
    if (TRANSIENT_NETWORK_ERROR_CODES.has(code as string)) return true;
    if (typeof message === 'string' && /socket hang up/i.test(message)) return true;
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

/** A ready `shouldHandle` that handles transient network errors only (never a cancellation). @publicApi */
export const handleTransientNetworkErrors: OutcomePredicate<unknown> = ({ outcome, context }) =>
  !outcome.ok && isTransientNetworkError(outcome.error) && !isCancellation(outcome.error, context);

/** Tells an error class from a filter function (the two forms `handleError` takes; both are functions). */
function isClass(fn: ErrorClass<unknown> | ((error: unknown) => boolean)): fn is ErrorClass<unknown> {
  return fn === Error || fn.prototype instanceof Error || /^class\s/.test(Function.prototype.toString.call(fn));
}
