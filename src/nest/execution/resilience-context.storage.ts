import { AsyncLocalStorage } from 'node:async_hooks';
import type { ResilienceContext } from '../../core/index.js';

/**
 * The context of the attempt whose synchronous part is running. The one piece of module-level state of
 * the Nest layer, and deliberately so: `currentResilienceContext()` takes no argument, so without
 * `AsyncLocalStorage` the context must be somewhere every caller can see. It holds no application's
 * state: it is set just before an attempt calls the method and put back as soon as the method returns,
 * and one synchronous stack runs at a time per process, so applications never see each other's.
 */
let current: ResilienceContext | undefined;
/** Set only when asynchronous propagation is switched on (`asyncContextPropagation: true`). */
let storage: AsyncLocalStorage<ResilienceContext> | undefined;

/**
 * The context of the decorated method currently running — its signal aborts when the client
 * disconnects or a timeout fires — or `undefined` outside one. Decorated methods do not receive the
 * context as an argument; this is how they pass the signal on.
 *
 * By default it is available during the synchronous part of each attempt, i.e. **before the method's
 * first `await`**, which costs nothing:
 *
 * ```ts
 * @Retry('catalog') @Timeout(2_000)
 * async product(id: string) {
 *   const signal = currentResilienceContext()?.signal;   // read it first
 *   return (await fetch(`${base}/products/${id}`, { signal })).json();
 * }
 * ```
 *
 * With `ResilienceModule.forRoot({ asyncContextPropagation: true })` it is available everywhere in the
 * attempt, through `AsyncLocalStorage` — which on Node 20 makes every `await` in the process about 3×
 * slower once it is in use (measured), so it is off by default.
 *
 * @publicApi
 */
export function currentResilienceContext(): ResilienceContext | undefined {
  return storage ? (storage.getStore() ?? current) : current;
}

/** @internal */
export function runInResilienceContext<R>(context: ResilienceContext, fn: () => R): R {
  if (storage) return storage.run(context, fn);
  const previous = current;
  current = context;
  try {
    return fn();
  } finally {
    current = previous;
  }
}

/** Switches on propagation through `AsyncLocalStorage` for the rest of the process. @internal */
export function enableAsyncContextPropagation(): void {
  storage ??= new AsyncLocalStorage<ResilienceContext>();
}
