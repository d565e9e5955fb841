/**
 * The result of one execution: a value or a captured error. Strategies pass outcomes to each other and
 * only the pipeline edge turns a failed outcome back into a thrown error.
 *
 * @publicApi
 */
export type Outcome<T> = SuccessOutcome<T> | FailureOutcome;

/** A call that returned `value`. @publicApi */
export interface SuccessOutcome<T> {
  /** Always `true`: narrows the outcome. */
  readonly ok: true;
  /** What the call returned. */
  readonly value: T;
}

/** A call that threw (or rejected with) `error`, which may be any value. @publicApi */
export interface FailureOutcome {
  /** Always `false`: narrows the outcome. */
  readonly ok: false;
  /** What the call threw; any value, not only an `Error`. */
  readonly error: unknown;
}

/** Builds a successful outcome. @publicApi */
export function outcomeFromValue<T>(value: T): SuccessOutcome<T> {
  return { ok: true, value };
}

/** Builds a failed outcome. Any thrown value is accepted, not only `Error` instances. @publicApi */
export function outcomeFromError(error: unknown): FailureOutcome {
  return { ok: false, error };
}

/** Returns the value of a successful outcome or throws the error of a failed one. @publicApi */
export function unwrapOutcome<T>(outcome: Outcome<T>): T {
  if (outcome.ok) return outcome.value;
  throw outcome.error;
}
