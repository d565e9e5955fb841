import { outcomeFromError, outcomeFromValue, type Outcome } from '../outcome.model.js';

/** Turns a promise into one that always fulfils, with the outcome. @internal */
export function settle<T>(promise: Promise<T>): Promise<Outcome<T>> {
  return promise.then(outcomeFromValue, outcomeFromError);
}
