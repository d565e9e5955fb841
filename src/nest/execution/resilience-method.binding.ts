import type { Observable } from 'rxjs';
import {
  ResilienceContext,
  setCriticality,
  type CancellationSource,
  type Criticality,
  ResiliencePropertyKey,
  type ResiliencePipeline,
} from '../../core/index.js';
import { collectObservable, isObservable, pipelineObservable } from './observable.util.js';
import { currentResilienceContext, runInResilienceContext } from './resilience-context.storage.js';
import { clientClosed, ResponseCancellationScope } from './response-cancellation.scope.js';
import { ReturnedValueResult, type ReturnedKind } from './returned-value.result.js';
import { callerCriticality } from './route-criticality.js';

/**
 * How a bound method runs: built by the explorer when the application initialises.
 *
 * @internal
 */
export interface ResilienceMethodBinding {
  /** A call as the method's callers see it: a promise, or an Observable for a method returning one. */
  invoke(self: unknown, args: unknown[]): unknown;
  /**
   * A call of a route handler, as Nest's router sees it: a cold Observable that runs the call when
   * subscribed and emits its value (or each value of an Observable method). Nest unsubscribes from a
   * handler's Observable when the client disconnects; unsubscribing before the end aborts the call.
   */
  invokeAsRoute(self: unknown, args: unknown[], criticality?: Criticality): Observable<unknown>;
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
 * cancelled when the subscriber of an Observable result unsubscribes (for a route handler: when the
 * client disconnects); `recordInvocation` keeps the call's instance and arguments in the context.
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
  /** The method's `@WithCriticality`, set on every call's context (a route's header overrides it). */
  methodCriticality?: Criticality,
): ResilienceMethodBinding {
  const returned: ReturnedKind | undefined = returnsObservable === undefined ? { kind: undefined } : undefined;
  const run = (
    self: unknown,
    args: unknown[],
    cancellation: CancellationSource | undefined,
    criticality: Criticality | undefined = methodCriticality,
  ): Promise<unknown> => {
    // A call made inside another resilient call (before its first `await`, or anywhere with
    // asyncContextPropagation) keeps that call's deadline: a caller's budget reaches every pipeline. It
    // keeps that call's criticality too, unless the route's header or the method's own decorator sets one.
    const outer = currentResilienceContext();
    const context = new ResilienceContext({ operationKey, cancellation, deadline: outer?.deadline });
    const effective = criticality ?? callerCriticality(outer);
    if (effective !== undefined) setCriticality(context, effective);
    const invocation: MethodInvocation = { method, self, args, returned };
    if (recordInvocation) context.properties.set(METHOD_INVOCATION, invocation);
    return pipeline.execute(invokeMethod, context, invocation);
  };
  /** Whether a call's value is the list of an Observable method's values. */
  const emitsValues = (): boolean => returnsObservable === true || returned?.kind === 'observable';
  const asObservable = (self: unknown, args: unknown[]) =>
    pipelineObservable(undefined, (scope) => run(self, args, scope) as Promise<unknown[]>);
  const asPromise = (self: unknown, args: unknown[]) => run(self, args, undefined);
  // Only Nest's router subscribes to it, and it unsubscribes early only when the client has gone away.
  const invokeAsRoute = (self: unknown, args: unknown[], criticality?: Criticality) =>
    pipelineObservable(
      undefined,
      (scope) =>
        run(self, args, scope, criticality ?? methodCriticality).then((value) =>
          emitsValues() ? (value as unknown[]) : [value],
        ),
      clientClosed,
    );

  if (returnsObservable === true) return { invoke: asObservable, invokeAsRoute };
  if (!returned) return { invoke: asPromise, invokeAsRoute };
  return {
    invoke: (self, args) => {
      if (returned.kind === 'observable') return asObservable(self, args);
      if (returned.kind === 'value') return asPromise(self, args);
      const scope = new ResponseCancellationScope(undefined);
      return new ReturnedValueResult(run(self, args, scope), returned, scope, () => asObservable(self, args));
    },
    invokeAsRoute,
  };
}
