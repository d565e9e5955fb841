import { ResilienceContext, ResiliencePropertyKey, type ResiliencePipeline } from '../../core/index.js';
import { collectObservable, isObservable, pipelineObservable } from './observable.util.js';
import { runInResilienceContext } from './resilience-context.storage.js';
import { ResponseCancellationScope, type RawResponse } from './response-cancellation.scope.js';

/**
 * Passed by Nest to a wrapped route handler as an extra, hidden argument: the raw response, so a client
 * that disconnects can cancel the call. Never reaches the method itself.
 *
 * @internal
 */
export class RequestLink {
  constructor(readonly response: RawResponse | undefined) {}
}

/** How a bound method runs: built by the explorer once the module has started. @internal */
export interface ResilienceMethodBinding {
  invoke(self: unknown, args: unknown[], link: RequestLink | undefined): unknown;
}

/** One call of a decorated method: the instance and the arguments it was called with. @internal */
export interface MethodInvocation {
  readonly method: (...args: unknown[]) => unknown;
  readonly self: unknown;
  readonly args: unknown[];
}

/** The invocation of the running call, for a `@Fallback` method that takes the original arguments. @internal */
export const METHOD_INVOCATION = new ResiliencePropertyKey<MethodInvocation>('nest-resilience.invocation');

/** One attempt: the method on its instance, an Observable result collected under the attempt's signal. */
function invokeMethod(context: ResilienceContext, invocation: MethodInvocation): unknown {
  return runInResilienceContext(context, () => {
    const result = invocation.method.apply(invocation.self, invocation.args);
    return isObservable(result) ? collectObservable(result, context.signal) : result;
  });
}

/**
 * How a decorated method runs through its pipeline: each call gets a context named `operationKey`,
 * cancelled when the HTTP client goes away (or, for an Observable method, when the subscriber
 * unsubscribes); `recordInvocation` keeps the call's instance and arguments in the context.
 *
 * @internal
 */
export function createMethodBinding(
  method: (...args: unknown[]) => unknown,
  pipeline: ResiliencePipeline<unknown>,
  operationKey: string,
  recordInvocation: boolean,
  returnsObservable: boolean,
): ResilienceMethodBinding {
  const run = (self: unknown, args: unknown[], scope: ResponseCancellationScope | undefined): Promise<unknown> => {
    const context = new ResilienceContext({ operationKey, cancellation: scope });
    const invocation: MethodInvocation = { method, self, args };
    if (recordInvocation) context.properties.set(METHOD_INVOCATION, invocation);
    return pipeline.execute(invokeMethod, context, invocation);
  };

  if (returnsObservable) {
    return {
      invoke: (self, args, link) =>
        pipelineObservable(link?.response, (scope) => run(self, args, scope) as Promise<unknown[]>),
    };
  }
  return {
    invoke: (self, args, link) =>
      run(self, args, link?.response ? new ResponseCancellationScope(link.response) : undefined),
  };
}
