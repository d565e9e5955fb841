import { isObservable, Observable, type Unsubscribable } from 'rxjs';
import { abortReason } from '../../core/index.js';
import { ResponseCancellationScope, type RawResponse } from './response-cancellation.scope.js';

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

/**
 * An Observable that, on each subscription, runs a pipeline under a cancellation scope tied to the HTTP
 * response (if any) and emits the values it resolves with. Unsubscribing before the end aborts the scope
 * (with `unsubscribed()`, by default an `AbortError` saying so) and unsubscribes what `run` registered
 * with `onCancel` (the running attempt).
 *
 * @internal
 */
export function pipelineObservable(
  response: RawResponse | undefined,
  run: (scope: ResponseCancellationScope, onCancel: (running: Unsubscribable) => void) => Promise<unknown[]>,
  unsubscribed: () => unknown = subscriberUnsubscribed,
): Observable<unknown> {
  return new Observable<unknown>((subscriber) => {
    const scope = new ResponseCancellationScope(response);
    let running: Unsubscribable | undefined;
    let settled = false;
    run(scope, (subscription) => (running = subscription)).then(
      (values) => {
        settled = true;
        for (const value of values) subscriber.next(value);
        subscriber.complete();
      },
      (error: unknown) => {
        settled = true;
        subscriber.error(error);
      },
    );
    return () => {
      if (settled) return; // the normal end: nothing to cancel
      scope.abort(unsubscribed());
      running?.unsubscribe();
    };
  });
}

function subscriberUnsubscribed(): DOMException {
  return new DOMException('The subscriber unsubscribed.', 'AbortError');
}
