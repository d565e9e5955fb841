import type { ResilienceContext } from '../context/resilience.context.js';

/**
 * The innermost component of every pipeline: runs the user's callback and turns a value, a thenable or a
 * synchronous throw into one promise. A call whose context is already cancelled does not run the callback.
 *
 * @internal
 */
export function invokeCallback(context: ResilienceContext): Promise<unknown> {
  const scope = context._scope;
  if (scope.aborted) return Promise.reject(scope.reason);
  try {
    return Promise.resolve(context._callback!(context, context._state));
  } catch (error) {
    return Promise.reject(error);
  }
}
