import { Observable } from 'rxjs';
import type { ResponseCancellationScope } from './response-cancellation.scope.js';

/** What the first call of a method of undeclared return type turned out to return. @internal */
export interface ReturnedKind {
  /** Set as soon as the method has returned, before the pipeline completes. */
  kind: 'observable' | 'value' | undefined;
}

const noop = (): void => undefined;

/**
 * The result of a decorated method whose return type is not declared (`import type { Observable }`, an
 * inferred return type, plain JavaScript) on its first call: the pipeline is already running, and what
 * the method returns decides what the result means. It is an Observable — subscribing emits each value
 * of a returned Observable, or the one value of a returned promise — and a promise-like — awaiting it
 * gives the value (or an Observable's last value). The first subscription takes the running execution
 * (unsubscribing before the end cancels it); later subscriptions to an Observable method run it anew.
 *
 * @internal
 */
export class ReturnedValueResult extends Observable<unknown> implements PromiseLike<unknown> {
  private readonly settled: Promise<unknown>;

  constructor(
    execution: Promise<unknown>,
    returned: ReturnedKind,
    scope: ResponseCancellationScope,
    runAgain: () => Observable<unknown>,
  ) {
    let taken = false;
    super((subscriber) => {
      if (taken && returned.kind === 'observable') return runAgain().subscribe(subscriber);
      taken = true;
      let done = false;
      execution.then(
        (value) => {
          done = true;
          if (returned.kind === 'observable') for (const item of value as unknown[]) subscriber.next(item);
          else subscriber.next(value);
          subscriber.complete();
        },
        (error: unknown) => {
          done = true;
          subscriber.error(error);
        },
      );
      return () => {
        if (!done && returned.kind === 'observable') {
          scope.abort(new DOMException('The subscriber unsubscribed.', 'AbortError'));
        }
      };
    });
    this.settled = execution.then((value) => (returned.kind === 'observable' ? (value as unknown[]).at(-1) : value));
    // Subscribed or awaited, a failure reaches the caller; left alone, it never crashes the process.
    this.settled.catch(noop);
  }

  then<R1 = unknown, R2 = never>(
    onFulfilled?: ((value: unknown) => R1 | PromiseLike<R1>) | null,
    onRejected?: ((reason: unknown) => R2 | PromiseLike<R2>) | null,
  ): Promise<R1 | R2> {
    return this.settled.then(onFulfilled, onRejected);
  }

  catch<R = never>(onRejected?: ((reason: unknown) => R | PromiseLike<R>) | null): Promise<unknown> {
    return this.settled.catch(onRejected);
  }

  finally(onFinally?: (() => void) | null): Promise<unknown> {
    return this.settled.finally(onFinally);
  }
}
