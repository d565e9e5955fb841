import { ResilienceContext, ResiliencePropertyKey, type ResiliencePipeline } from '../../core/index.js';
import { collectObservable, isObservable, pipelineObservable } from './observable.util.js';
import { runInResilienceContext } from './resilience-context.storage.js';
import { ResponseCancellationScope, type RawResponse } from './response-cancellation.scope.js';
import { ReturnedValueResult, type ReturnedKind } from './returned-value.result.js';

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
  /** For a method without a declared return type: learns what it returns. */
  readonly returned?: ReturnedKind;
}

/** The invocation of the running call, for a `@Fallback` method that takes the original arguments. @internal */
export const METHOD_INVOCATION = new ResiliencePropertyKey<MethodInvocation>('nest-resilience.invocation');

/** One attempt: the method on its instance, an Observable result collected under the attempt's signal. */
function invokeMethod(context: ResilienceContext, invocation: MethodInvocation): unknown {
  return runInResilienceContext(context, () => {
    const result = invocation.method.apply(invocation.self, invocation.args);
    const returned = invocation.returned;
    if (isObservable(result)) {
      if (returned) returned.kind = 'observable';
      return collectObservable(result, context.signal);
    }
    if (returned) returned.kind ??= 'value';
    return result;
  });
}

/**
 * How a decorated method runs through its pipeline: each call gets a context named `operationKey`,
 * cancelled when the HTTP client goes away (or, for an Observable method, when the subscriber
 * unsubscribes); `recordInvocation` keeps the call's instance and arguments in the context.
 * `returnsObservable` comes from the declared return type; without one (`undefined`: a type-only import,
 * an inferred type, plain JavaScript) the first returned value decides, and is remembered.
 *
 * @internal
 */
export function createMethodBinding(
  method: (...args: unknown[]) => unknown,
  pipeline: ResiliencePipeline<unknown>,
  operationKey: string,
  recordInvocation: boolean,
  returnsObservable: boolean | undefined,
): ResilienceMethodBinding {
  const returned: ReturnedKind | undefined = returnsObservable === undefined ? { kind: undefined } : undefined;
  const run = (self: unknown, args: unknown[], scope: ResponseCancellationScope | undefined): Promise<unknown> => {
    const context = new ResilienceContext({ operationKey, cancellation: scope });
    const invocation: MethodInvocation = { method, self, args, returned };
    if (recordInvocation) context.properties.set(METHOD_INVOCATION, invocation);
    return pipeline.execute(invokeMethod, context, invocation);
  };
  const asObservable = (self: unknown, args: unknown[], link: RequestLink | undefined) =>
    pipelineObservable(link?.response, (scope) => run(self, args, scope) as Promise<unknown[]>);
  const asPromise = (self: unknown, args: unknown[], link: RequestLink | undefined) =>
    run(self, args, link?.response ? new ResponseCancellationScope(link.response) : undefined);

  if (returnsObservable === true) return { invoke: asObservable };
  if (!returned) return { invoke: asPromise };
  return {
    invoke: (self, args, link) => {
      if (returned.kind === 'observable') return asObservable(self, args, link);
      if (returned.kind === 'value') return asPromise(self, args, link);
      const scope = new ResponseCancellationScope(link?.response);
      return new ReturnedValueResult(run(self, args, scope), returned, scope, () => asObservable(self, args, link));
    },
  };
}
