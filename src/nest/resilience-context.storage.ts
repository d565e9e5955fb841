import { AsyncLocalStorage } from 'node:async_hooks';
import type { ResilienceContext } from '../core/index.js';

const storage = new AsyncLocalStorage<ResilienceContext>();

/**
 * The context of the decorated method currently running (its signal aborts when the client disconnects
 * or a timeout fires), or `undefined` outside one. Decorated methods do not receive the context as an
 * argument, so this is how they pass the signal on:
 *
 * ```ts
 * @Retry('catalog') @Timeout(2_000)
 * async product(id: string) {
 *   return fetch(`${base}/products/${id}`, { signal: currentResilienceContext()?.signal });
 * }
 * ```
 *
 * @publicApi
 */
export function currentResilienceContext(): ResilienceContext | undefined {
  return storage.getStore();
}

/** @internal */
export function runInResilienceContext<R>(context: ResilienceContext, fn: () => R): R {
  return storage.run(context, fn);
}
