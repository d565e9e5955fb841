import { AsyncLocalStorage } from 'node:async_hooks';
import type * as oidc from 'openid-client';

/** The signal of the pipeline attempt a provider request belongs to (the attempt's timeout aborts it). */
const attemptSignal = new AsyncLocalStorage<AbortSignal>();

/**
 * Runs `request` with `signal` as the signal of every HTTP request it makes through `abortableFetch`:
 * when the attempt times out (or its caller cancels), the request is aborted and its socket closed,
 * instead of going on unseen until openid-client's own 30 s timeout.
 *
 * @internal
 */
export function withAttemptSignal<T>(signal: AbortSignal, request: () => Promise<T>): Promise<T> {
  return attemptSignal.run(signal, request);
}

/**
 * The fetch given to openid-client (`customFetch`): the global `fetch` (read on every call), with the
 * request's own signal (openid-client's timeout) joined to the signal of the attempt it runs in.
 *
 * @internal
 */
export const abortableFetch: oidc.CustomFetch = (url, options) => {
  const attempt = attemptSignal.getStore();
  const own = options.signal;
  const signal = attempt && own ? AbortSignal.any([attempt, own]) : (attempt ?? own);
  return fetch(url, { ...options, signal });
};
