import { outcomeFromError, outcomeFromValue, type Outcome } from '../outcome/outcome.model.js';

/** Turns a promise into one that always fulfils, with the outcome. @internal */
export function settle<T>(promise: Promise<T>): Promise<Outcome<T>> {
  return promise.then(outcomeFromValue, outcomeFromError);
}

/**
 * Where `captureSettlers` leaves a new promise's resolve and reject: read them right after
 * `new Promise(captureSettlers)`, before anything else can make another promise this way.
 *
 * @internal
 */
export const settlers: { resolve?: (value: never) => void; reject?: (reason: unknown) => void } = {};

/**
 * A promise executor that allocates no closure: `new Promise(captureSettlers)` leaves the promise's
 * settlers in `settlers`.
 *
 * @internal
 */
export function captureSettlers(resolve: (value: never) => void, reject: (reason: unknown) => void): void {
  settlers.resolve = resolve;
  settlers.reject = reject;
}
