import { Inject, Injectable, Logger, Optional, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import type { InstanceWrapper } from '@nestjs/core/injector/instance-wrapper.js';
import { Observable } from 'rxjs';
import { OptionsValidator, ResilienceValidationError } from '../../core/index.js';
import { ResiliencePipelineRegistry } from '../../config/index.js';
import {
  getResilienceMethodMetadata,
  type ResilienceMethodMetadata,
} from '../decorators/resilience-method.metadata.js';
import type { ResilienceMethodBinding } from '../execution/resilience-method.binding.js';
import { planMethodPipeline } from './method-pipeline.factory.js';
import { RESILIENCE_BINDINGS, RESILIENCE_STARTUP_ISSUES } from '../resilience.constants.js';
import { NEST_RULES } from '../resilience.messages.js';
import { enableAsyncContextPropagation } from '../execution/resilience-context.storage.js';
import { moduleCriticalityHeader, requestArgumentIndex, requestCriticality } from '../execution/route-criticality.js';
import { RESILIENCE_MODULE_OPTIONS } from '../options/resilience.module-definition.js';
import type { ResilienceModuleOptions } from '../options/resilience-module-options.interface.js';
import { RESILIENCE_STORE_HANDLE, type ResilienceStoreHandle } from '../store/resilience-store.factory.js';

type AnyMethod = (...args: unknown[]) => unknown;

/** One decorated method bound to an instance: what calls it directly, and what Nest's router calls. */
interface BoundMethod {
  readonly name: string;
  readonly meta: ResilienceMethodMetadata;
  readonly binding: ResilienceMethodBinding;
  readonly direct: AnyMethod;
  readonly route: AnyMethod;
}

/** The pipelines of an instance's (or, for a request-scoped class, its instances') methods. */
type Bindings = Map<ResilienceMethodMetadata, ResilienceMethodBinding>;

/** The decorated methods of one singleton instance. */
interface BoundInstance {
  readonly instance: object;
  readonly isController: boolean;
  readonly methods: BoundMethod[];
}

/**
 * Binds the pipelines of every decorated method of every provider and controller of the application
 * when it initialises. The decorators only record metadata; here each method of each instance Nest
 * created gets its own property — a function that runs the method's pipeline, inheriting the metadata
 * of the decorated method (route, guards, pipes, Swagger…), its name and its length — while the class
 * stays as it is.
 *
 * Two moments, because Nest reads route handlers before its `onModuleInit` hooks: `ResilienceModule`'s
 * `configure()` (which Nest calls while registering modules, before it registers HTTP routes) binds
 * every instance and gives route handlers their route form — an Observable Nest unsubscribes from when
 * the client disconnects, which cancels the call — and `onModuleInit` binds whatever is not bound yet
 * (an application context, a microservice) and gives every method the form its callers expect (a
 * promise, or an Observable for a method returning one). Handlers Nest reads before that (a
 * microservice started with `listen()` alone) reach the pipeline through the class's method, a stateless
 * dispatcher to the instance's pipeline. Binding is idempotent; every problem of every pipeline and decorator is reported in one
 * error that fails the start. Request-scoped and transient classes are bound through their prototype.
 *
 * @internal
 */
@Injectable()
export class ResilienceExplorer implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('ResilienceModule');
  /** The singleton instances bound, in the order they were. */
  private readonly instances = new Map<object, BoundInstance>();
  /** The prototypes of the request-scoped and transient classes bound. */
  private readonly prototypes = new Set<object>();
  /** Instances already looked at (bound, or without decorated methods; an alias shares its instance). */
  private readonly seen = new WeakSet<object>();
  private failure: ResilienceValidationError | undefined;

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    @Inject(ResiliencePipelineRegistry) private readonly registry: ResiliencePipelineRegistry,
    @Optional() @Inject(RESILIENCE_MODULE_OPTIONS) private readonly options?: ResilienceModuleOptions,
    @Optional() @Inject(RESILIENCE_STORE_HANDLE) private readonly storeHandle?: ResilienceStoreHandle,
    @Optional() @Inject(RESILIENCE_STARTUP_ISSUES) private readonly startupIssues?: OptionsValidator,
  ) {
    this.installDispatchers();
  }

  /**
   * Makes each decorated method of each class of the application dispatch to the pipeline bound to the
   * instance it is called on, if any — for Nest code that reads a handler before the module is bound: a
   * microservice started with `listen()` alone registers its message handlers before the init hooks.
   * The dispatcher holds no state (an instance made with `new` outside Nest, or one of a module that is
   * not initialised, runs the method as it is), so it stays for the other applications of the process.
   */
  private installDispatchers(): void {
    for (const wrapper of [...this.discovery.getProviders(), ...this.discovery.getControllers()]) {
      const metatype = wrapper.metatype as { prototype?: unknown } | null | undefined;
      if (wrapper.inject || typeof metatype !== 'function' || typeof metatype.prototype !== 'object') continue;
      const prototype = metatype.prototype as object;
      for (const name of this.scanner.getAllMethodNames(prototype)) {
        const meta = getResilienceMethodMetadata((prototype as Record<string, unknown>)[name]);
        if (meta) installDispatcher(prototype, name, meta);
      }
    }
  }

  /**
   * Binds every instance, route handlers in their route form. Called by `ResilienceModule.configure()`,
   * before an HTTP application registers its routes. @internal
   */
  bindBeforeRoutes(): void {
    this.bindAll();
    const header = this.criticalityHeader();
    for (const bound of this.instances.values()) {
      install(
        bound.instance,
        bound.isController && header ? withCriticalityHeader(bound, header) : bound.methods,
        bound.isController,
      );
    }
  }

  /** The criticality header routes read (lower case), or undefined when headers are ignored. */
  private criticalityHeader(): string | undefined {
    return moduleCriticalityHeader(this.options);
  }

  onModuleInit(): void {
    if (this.options?.asyncContextPropagation) enableAsyncContextPropagation();
    this.bindAll();
    for (const bound of this.instances.values()) install(bound.instance, bound.methods, false);
  }

  async onApplicationShutdown(): Promise<void> {
    for (const prototype of this.prototypes) delete (prototype as Record<symbol, unknown>)[RESILIENCE_BINDINGS];
    this.prototypes.clear();
    await this.registry.dispose();
    await this.storeHandle?.close();
  }

  /** Binds every instance not bound yet; throws the one start-up error when anything is invalid. */
  private bindAll(): void {
    if (this.failure) throw this.failure;
    const v = new OptionsValidator('');
    v.addIssues(this.startupIssues?.problems ?? []);
    const controllers = this.discovery.getControllers();
    const planned: { wrapper: InstanceWrapper<unknown>; methods: BoundMethod[]; isController: boolean }[] = [];
    for (const [isController, wrappers] of [
      [false, this.discovery.getProviders()],
      [true, controllers],
    ] as const) {
      for (const wrapper of wrappers) {
        const instance = wrapper.instance as unknown;
        if (!wrapper.metatype || !instance || typeof instance !== 'object' || this.seen.has(instance)) continue;
        this.seen.add(instance);
        const methods = this.planInstance(wrapper, v);
        if (methods.length > 0) planned.push({ wrapper, methods, isController });
      }
    }
    if (!v.isValid) {
      this.failure = new ResilienceValidationError(v.problems, 'Invalid resilience configuration');
      throw this.failure;
    }
    for (const { wrapper, methods, isController } of planned) {
      const instance = wrapper.instance as object;
      if (wrapper.isDependencyTreeStatic() && !wrapper.isTransient) {
        if (this.instances.has(instance)) continue;
        defineBindings(instance, methods);
        this.instances.set(instance, { instance, isController, methods });
      } else {
        this.bindPrototype(Object.getPrototypeOf(instance) as object, methods);
      }
    }
  }

  /** Plans the pipeline of each decorated method of an instance; problems go to `v`. */
  private planInstance(wrapper: InstanceWrapper<unknown>, v: OptionsValidator): BoundMethod[] {
    const instance = wrapper.instance as object;
    const prototype = Object.getPrototypeOf(instance) as object;
    const isStatic = wrapper.isDependencyTreeStatic() && !wrapper.isTransient;
    if (!isStatic && this.prototypes.has(prototype)) return []; // bound already
    const methods: BoundMethod[] = [];
    for (const name of this.scanner.getAllMethodNames(prototype)) {
      const meta = getResilienceMethodMetadata((prototype as Record<string, unknown>)[name]);
      if (!meta) continue;
      if (!isStatic && Object.prototype.hasOwnProperty.call(prototype, RESILIENCE_BINDINGS)) {
        v.add(meta.className, 'request-scoped', NEST_RULES.boundElsewhere);
        return [];
      }
      const returnType = Reflect.getMetadata('design:returntype', prototype, name) as unknown;
      // No declared type (type-only import, inferred, plain JS; `Object` for the first): the value decides.
      const returnsObservable =
        returnType === undefined || returnType === Object
          ? undefined
          : returnType === Observable || isObservableClass(returnType);
      const plan = planMethodPipeline(meta, instance, this.registry, returnsObservable, v);
      if (!plan) continue;
      methods.push(boundMethod(name, meta, plan.binding));
      this.logger.debug(plan.description);
    }
    return methods;
  }

  /**
   * A request-scoped or transient class: Nest creates its instances later (per request, per consumer),
   * so the pipelines are kept on the prototype, where its methods' dispatchers find them — shared by every
   * application of the process: one application binds it, another is told so.
   */
  private bindPrototype(prototype: object, methods: BoundMethod[]): void {
    if (this.prototypes.has(prototype)) return;
    defineBindings(prototype, methods);
    this.prototypes.add(prototype);
  }
}

/** The two forms of a bound method, each inheriting the decorated method's metadata. */
function boundMethod(name: string, meta: ResilienceMethodMetadata, binding: ResilienceMethodBinding): BoundMethod {
  return {
    name,
    meta,
    binding,
    direct: inheritingFunction(meta.original, function (this: unknown, ...args: unknown[]) {
      return binding.invoke(this, args);
    }),
    route: inheritingFunction(meta.original, function (this: unknown, ...args: unknown[]) {
      return binding.invokeAsRoute(this, args);
    }),
  };
}

/**
 * `fn`, with `original`'s name and length, and `original` as its prototype: Nest reads a handler's
 * guards, interceptors, pipes, status code and headers from the function it calls with
 * `Reflect.getMetadata`, which looks up the prototype chain — so they stay on the decorated method, where
 * the decorators wrote them, and read the same through either form.
 */
function inheritingFunction(original: AnyMethod, fn: AnyMethod): AnyMethod {
  Object.setPrototypeOf(fn, original);
  Object.defineProperty(fn, 'name', { value: original.name, configurable: true });
  Object.defineProperty(fn, 'length', { value: original.length, configurable: true });
  return fn;
}

function defineBindings(target: object, methods: BoundMethod[]): void {
  const bindings: Bindings = new Map(methods.map((method) => [method.meta, method.binding]));
  Object.defineProperty(target, RESILIENCE_BINDINGS, { value: bindings, configurable: true });
}

/**
 * Replaces the decorated method, on the prototype that defines it, with a function that runs the
 * pipeline bound to `this` (its own, or its prototype's for a request-scoped class), or else the method.
 */
function installDispatcher(prototype: object, name: string, meta: ResilienceMethodMetadata): void {
  let owner: object | null = prototype;
  while (owner && Object.getOwnPropertyDescriptor(owner, name)?.value !== meta.original) {
    owner = Object.getPrototypeOf(owner) as object | null;
  }
  if (!owner) return; // dispatched already, or replaced by something else
  const original = meta.original;
  const dispatcher = inheritingFunction(original, function (this: unknown, ...args: unknown[]) {
    const binding = (this as { [RESILIENCE_BINDINGS]?: Bindings } | null | undefined)?.[RESILIENCE_BINDINGS]?.get(meta);
    return binding ? binding.invoke(this, args) : original.apply(this, args);
  });
  const descriptor = Object.getOwnPropertyDescriptor(owner, name)!;
  Object.defineProperty(owner, name, { ...descriptor, value: dispatcher });
}

/**
 * The route forms of a controller's methods that read the criticality `header` of their request: Nest
 * hands each one the request as an extra last argument, which the route form takes off again.
 */
function withCriticalityHeader(bound: BoundInstance, header: string): BoundMethod[] {
  const controller = (bound.instance as { constructor: object }).constructor;
  return bound.methods.map((method) => {
    const index = requestArgumentIndex(controller, method.name, method.meta.original.length);
    const { binding } = method;
    const route = inheritingFunction(method.meta.original, function (this: unknown, ...args: unknown[]) {
      const criticality = requestCriticality(args[index], header);
      args.length = index;
      return binding.invokeAsRoute(this, args, criticality);
    });
    return { ...method, route };
  });
}

/** Makes each method an own property of `target`, in its route form or its direct form. */
function install(target: object, methods: BoundMethod[], routeForm: boolean): void {
  for (const method of methods) {
    Object.defineProperty(target, method.name, {
      value: routeForm ? method.route : method.direct,
      configurable: true,
      writable: true,
      enumerable: false,
    });
  }
}

function isObservableClass(type: unknown): boolean {
  return (
    typeof type === 'function' &&
    typeof (type.prototype as { subscribe?: unknown } | undefined)?.subscribe === 'function'
  );
}
