/**
 * Failures of resilient HTTP clients registered with `upstreamErrorMapping`: the client marks the error
 * it rejects with (after every retry) with the answer it stands for, and `ResilienceExceptionFilter`
 * answers a marked error that reaches Nest with that status and one log line. The error itself is left
 * as it is (an `AxiosError` stays one for code that catches it). No axios here: the client classifies.
 */

/** What a marked failure is answered with. @internal */
export interface UpstreamFailure {
  /** 502 (the upstream answered with an error, or could not be reached) or 504 (it did not answer in time). */
  readonly status: 502 | 504;
  /** The status's reason phrase. */
  readonly error: 'Bad Gateway' | 'Gateway Timeout';
  /** The one log line: the request's operation key and what happened — never a URL path or query. */
  readonly detail: string;
}

const failures = new WeakMap<object, UpstreamFailure>();

/** Marks `error` (an object) as an upstream failure to answer with `failure`. @internal */
export function markUpstreamFailure(error: object, failure: UpstreamFailure): void {
  failures.set(error, failure);
}

/** The answer a marked error stands for, or `undefined`. @internal */
export function upstreamFailureOf(error: unknown): UpstreamFailure | undefined {
  return typeof error === 'object' && error !== null ? failures.get(error) : undefined;
}

/**
 * Stands, in `@Catch(...)`, for the marked errors: Nest picks a filter with `instanceof`, which this class
 * answers for exactly the errors `markUpstreamFailure` marked. Never instantiated.
 *
 * @internal
 */
export abstract class MarkedUpstreamFailure {
  static [Symbol.hasInstance](value: unknown): boolean {
    return upstreamFailureOf(value) !== undefined;
  }
}
