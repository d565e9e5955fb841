import { Req } from '@nestjs/common';
import { ROUTE_ARGS_METADATA } from '@nestjs/common/constants.js';
import { getCriticality, parseCriticality, type Criticality, type ResilienceContext } from '../../core/index.js';

/** The default request header that carries a call's criticality. @publicApi */
export const DEFAULT_CRITICALITY_HEADER = 'x-criticality';

/** The argument index of the request each decorated route handler receives, by class and method. */
const REQUEST_ARGUMENTS = new WeakMap<object, Map<string, number>>();

/**
 * Makes Nest's router hand the request to a route handler as one more argument, after every argument
 * it declares (a `@Req()` the method does not have): the route form of the method reads the request's
 * criticality header from it and calls the method without it. Recorded once per class and method, so
 * every application of the process agrees. Returns the argument's index.
 *
 * @internal
 */
export function requestArgumentIndex(controller: object, methodName: string, declaredLength: number): number {
  let methods = REQUEST_ARGUMENTS.get(controller);
  if (!methods) REQUEST_ARGUMENTS.set(controller, (methods = new Map<string, number>()));
  const known = methods.get(methodName);
  if (known !== undefined) return known;
  const params = (Reflect.getMetadata(ROUTE_ARGS_METADATA, controller, methodName) ?? {}) as Record<
    string,
    { index: number }
  >;
  let index = declaredLength;
  for (const param of Object.values(params)) index = Math.max(index, param.index + 1);
  Req()((controller as { prototype: object }).prototype, methodName, index);
  methods.set(methodName, index);
  return index;
}

/**
 * The criticality a call hands on, to the calls it makes and the services it calls: its own, unless it is
 * `default` (what a call without one has anyway). @internal
 */
export function callerCriticality(context: ResilienceContext | undefined): Criticality | undefined {
  if (context === undefined) return undefined;
  const criticality = getCriticality(context);
  return criticality === 'default' ? undefined : criticality;
}

/** The criticality header routes read (lower case), or undefined when the module ignores headers. @internal */
export function moduleCriticalityHeader(
  options: { criticalityHeader?: string | false } | undefined,
): string | undefined {
  const header = options?.criticalityHeader;
  if (header === false) return undefined;
  return typeof header === 'string' && header.length > 0 ? header.toLowerCase() : DEFAULT_CRITICALITY_HEADER;
}

/** The criticality a request's `header` names, if it names one. @internal */
export function requestCriticality(request: unknown, header: string): Criticality | undefined {
  const headers = (request as { headers?: Record<string, unknown> } | undefined)?.headers;
  const value = headers?.[header];
  return parseCriticality(Array.isArray(value) ? value[0] : value);
}
