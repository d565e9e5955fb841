import { isObservable, type Observable } from 'rxjs';
import { abortReason } from '../core/internal.js';

export { isObservable };

/**
 * Subscribes to an observable and resolves with every value it emitted once it completes. Aborting the
 * signal unsubscribes and rejects with the abort reason. Each call subscribes anew, so a retried attempt
 * re-runs a cold observable.
 *
 * @internal
 */
export function collectObservable<T>(source: Observable<T>, signal: AbortSignal | undefined): Promise<T[]> {
  if (signal?.aborted) return Promise.reject(abortReason(signal));
  return new Promise<T[]>((resolve, reject) => {
    const values: T[] = [];
    const onAbort = (): void => {
      subscription.unsubscribe();
      reject(abortReason(signal!));
    };
    const subscription = source.subscribe({
      next: (value) => values.push(value),
      error: (error: unknown) => {
        signal?.removeEventListener('abort', onAbort);
        reject(error);
      },
      complete: () => {
        signal?.removeEventListener('abort', onAbort);
        resolve(values);
      },
    });
    if (!subscription.closed) signal?.addEventListener('abort', onAbort, { once: true });
  });
}
