import 'reflect-metadata';
import { RESILIENCE_METHOD_METADATA } from '../resilience.constants.js';
import { NEST_RULES } from '../resilience.messages.js';
import { isCriticality, type Criticality } from '../../core/index.js';
import { STRATEGY_CATALOG, type CatalogLineName } from '../../config/index.js';

/** The name of a built-in catalog line a method decorator records (`retry` for `@Retry`). @publicApi */
export type DecoratorSectionName = Exclude<CatalogLineName, 'totalTimeout' | 'chaosLatency' | 'chaosFault'>;

/** @deprecated Use `DecoratorSectionName`. @publicApi */
export type ResilienceSection = DecoratorSectionName;

/**
 * The names of the built-in catalog lines that have a decorator, outermost first: the order decorators
 * compose in, whatever order they are written in.
 *
 * @deprecated The order is `STRATEGY_CATALOG`'s: `STRATEGY_CATALOG.filter((line) => line.decorator).map((line) => line.name)`.
 * @publicApi
 */
export const RESILIENCE_DECORATOR_ORDER: readonly DecoratorSectionName[] = STRATEGY_CATALOG.filter(
  (line) => line.decorator !== undefined,
).map((line) => line.name as DecoratorSectionName);

type AnyMethod = (...args: unknown[]) => unknown;

/** What the decorators of one method recorded. @internal */
export interface ResilienceMethodMetadata {
  /** The decorated method, as the class defines it (the prototype's method). */
  readonly original: AnyMethod;
  readonly methodName: string;
  readonly className: string;
  readonly sections: Partial<Record<string, unknown>>;
  /** Set by `@WithCriticality`: the criticality of every call of the method. */
  criticality?: Criticality;
}

/**
 * The resilience metadata of a method, if it has any: of the decorated method itself, or of a function
 * that inherits its metadata from it (the method the module installs on an instance).
 *
 * @internal
 */
export function getResilienceMethodMetadata(method: unknown): ResilienceMethodMetadata | undefined {
  if (typeof method !== 'function') return undefined;
  return Reflect.getMetadata(RESILIENCE_METHOD_METADATA, method) as ResilienceMethodMetadata | undefined;
}

/**
 * Records one decorator's section in the method's metadata, like `SetMetadata`: the method itself is
 * left as it is. `ResilienceModule` reads the metadata when the application initialises and binds each
 * method's pipeline to the instances Nest created.
 *
 * @internal
 */
export function recordResilienceSection(decorator: string, section: string, spec: unknown): MethodDecorator {
  return (target, key, descriptor) => {
    const meta = methodMetadata(target, key, descriptor);
    if (meta.sections[section] !== undefined) {
      throw new Error(NEST_RULES.appliedTwice(decorator, `${meta.className}.${meta.methodName}`));
    }
    meta.sections[section] = spec;
    return descriptor;
  };
}

/** Records `@WithCriticality` in the method's metadata. @internal */
export function recordMethodCriticality(criticality: Criticality): MethodDecorator {
  if (!isCriticality(criticality)) throw new Error(NEST_RULES.notACriticality(criticality));
  return (target, key, descriptor) => {
    const meta = methodMetadata(target, key, descriptor);
    if (meta.criticality !== undefined) {
      throw new Error(NEST_RULES.appliedTwice('WithCriticality', `${meta.className}.${meta.methodName}`));
    }
    meta.criticality = criticality;
    return descriptor;
  };
}

/** The resilience metadata of the decorated method, made on its first decorator. */
function methodMetadata(target: object, key: string | symbol, descriptor: unknown): ResilienceMethodMetadata {
  const method = (descriptor as TypedPropertyDescriptor<unknown> | undefined)?.value;
  if (typeof method !== 'function') {
    throw new Error(NEST_RULES.notAMethodTarget(String(key)));
  }
  let meta = Reflect.getOwnMetadata(RESILIENCE_METHOD_METADATA, method) as ResilienceMethodMetadata | undefined;
  if (!meta) {
    meta = {
      original: method as AnyMethod,
      methodName: String(key),
      className: (target as { constructor?: { name?: string } }).constructor?.name ?? 'Object',
      sections: {},
    };
    Reflect.defineMetadata(RESILIENCE_METHOD_METADATA, meta, method);
  }
  return meta;
}
