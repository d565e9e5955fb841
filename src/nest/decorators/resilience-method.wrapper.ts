import 'reflect-metadata';
import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import { ROUTE_ARGS_METADATA } from '@nestjs/common/constants.js';
import { RESILIENCE_BINDINGS, RESILIENCE_METHOD_METADATA } from '../resilience.constants.js';
import { NEST_RULES } from '../resilience.messages.js';
import { STRATEGY_SECTIONS, type StrategySectionName } from '../../core/index.js';
import { RequestLink, type ResilienceMethodBinding } from '../execution/resilience-method.binding.js';
import { bindOnFirstCall } from './method-binding.registry.js';

/** The parts a method's pipeline is made of, one per decorator. @publicApi */
export type ResilienceSection = Exclude<StrategySectionName, 'totalTimeout' | 'chaosLatency' | 'chaosFault'>;

/**
 * The order decorators compose in, outermost first, whatever order they are written in:
 * `@Fallback` → `@UseResiliencePipeline` → `@RateLimit` → `@ConcurrencyLimit` → `@Hedging` → `@Retry` →
 * `@CircuitBreaker` → `@Timeout` → the method. It is the order of `STRATEGY_SECTIONS`, which
 * configuration sections follow too.
 *
 * @publicApi
 */
export const RESILIENCE_DECORATOR_ORDER: readonly ResilienceSection[] = STRATEGY_SECTIONS.filter(
  (section) => section.decorator !== undefined,
).map((section) => section.name as ResilienceSection);

type AnyMethod = (...args: unknown[]) => unknown;

/** What the decorators of one method recorded. @internal */
export interface ResilienceMethodMetadata {
  readonly original: AnyMethod;
  readonly methodName: string;
  readonly className: string;
  readonly sections: Partial<Record<ResilienceSection, unknown>>;
  /** Where Nest passes the hidden request link to a route handler. */
  readonly requestLinkIndex: number;
}

const RequestLinkParam = createParamDecorator((_data: unknown, ctx: ExecutionContext) => {
  if (ctx.getType() !== 'http') return new RequestLink(undefined);
  const response = ctx.switchToHttp().getResponse<{ raw?: unknown }>();
  return new RequestLink((response?.raw ?? response) as RequestLink['response']);
});

/** The resilience metadata of a method (its wrapper), if it has any. @internal */
export function getResilienceMethodMetadata(method: unknown): ResilienceMethodMetadata | undefined {
  if (typeof method !== 'function') return undefined;
  return Reflect.getOwnMetadata(RESILIENCE_METHOD_METADATA, method) as ResilienceMethodMetadata | undefined;
}

/**
 * Records one decorator's section on a method, wrapping the method the first time. The wrapper replaces
 * the method when the class is defined — before Nest reads route handlers — and carries every metadata
 * entry of the original (route, guards, pipes, Swagger…), its name and its length. It runs the method's
 * pipeline once the module has bound one to the instance — on the first call at the latest, for an
 * instance Nest created — and the bare method for an instance made with `new` outside Nest.
 *
 * @internal
 */
export function recordResilienceSection(decorator: string, section: ResilienceSection, spec: unknown): MethodDecorator {
  return (target, key, descriptor) => {
    const meta = wrapOnce(target, key, descriptor as TypedPropertyDescriptor<unknown>);
    if (meta.sections[section] !== undefined) {
      throw new Error(NEST_RULES.appliedTwice(decorator, `${meta.className}.${meta.methodName}`));
    }
    meta.sections[section] = spec;
    return descriptor;
  };
}

function wrapOnce(
  target: object,
  key: string | symbol,
  descriptor: TypedPropertyDescriptor<unknown>,
): ResilienceMethodMetadata {
  const current = descriptor.value;
  if (typeof current !== 'function') {
    throw new Error(NEST_RULES.notAMethodTarget(String(key)));
  }
  const existing = getResilienceMethodMetadata(current);
  if (existing) return existing;

  const original = current as AnyMethod;
  const className = (target as { constructor?: { name?: string } }).constructor?.name ?? 'Object';
  const requestLinkIndex = nextParameterIndex(target, key, original);
  const meta: ResilienceMethodMetadata = {
    original,
    methodName: String(key),
    className,
    sections: {},
    requestLinkIndex,
  };

  const wrapper = function (this: unknown, ...args: unknown[]): unknown {
    let link: RequestLink | undefined;
    if (args.length > requestLinkIndex && args[requestLinkIndex] instanceof RequestLink) {
      link = args[requestLinkIndex];
      args = args.slice(0, requestLinkIndex);
    }
    const holder = this as Record<symbol, Map<ResilienceMethodMetadata, ResilienceMethodBinding> | undefined> | null;
    let binding = holder?.[RESILIENCE_BINDINGS]?.get(meta);
    if (!binding) {
      try {
        if (bindOnFirstCall(this)) binding = holder?.[RESILIENCE_BINDINGS]?.get(meta);
      } catch (error) {
        return Promise.reject(error); // invalid configuration: say so rather than run unprotected
      }
    }
    return binding ? binding.invoke(this, args, link) : original.apply(this, args);
  };
  for (const metadataKey of Reflect.getOwnMetadataKeys(original)) {
    Reflect.defineMetadata(metadataKey, Reflect.getOwnMetadata(metadataKey, original), wrapper);
  }
  Object.defineProperty(wrapper, 'name', { value: original.name, configurable: true });
  Object.defineProperty(wrapper, 'length', { value: original.length, configurable: true });
  Reflect.defineMetadata(RESILIENCE_METHOD_METADATA, meta, wrapper);
  descriptor.value = wrapper;
  // Route handlers receive the response as a hidden extra argument (ignored elsewhere).
  RequestLinkParam()(target, key, requestLinkIndex);
  return meta;
}

/** The first parameter position after every declared and decorated parameter. */
function nextParameterIndex(target: object, key: string | symbol, method: AnyMethod): number {
  const routeArgs = (Reflect.getMetadata(ROUTE_ARGS_METADATA, target.constructor, key) ?? {}) as Record<
    string,
    { index: number }
  >;
  const paramTypes = (Reflect.getMetadata('design:paramtypes', target, key) ?? []) as unknown[];
  let index = Math.max(method.length, paramTypes.length);
  for (const arg of Object.values(routeArgs)) index = Math.max(index, arg.index + 1);
  return index;
}
