import { Inject, Injectable, Logger, Optional, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import type { InstanceWrapper } from '@nestjs/core/injector/instance-wrapper.js';
import { Observable } from 'rxjs';
import { OptionsValidator, ResiliencePipelineRegistry, ResilienceValidationError } from '../core/index.js';
import { registerFirstCallBinder, type FirstCallBinder } from './decorators/method-binding.registry.js';
import { getResilienceMethodMetadata, type ResilienceMethodMetadata } from './decorators/resilience-method.wrapper.js';
import type { ResilienceMethodBinding } from './execution/resilience-method.binding.js';
import { planMethodPipeline } from './method-pipeline.factory.js';
import { RESILIENCE_BINDINGS, RESILIENCE_STARTUP_ISSUES } from './resilience.constants.js';
import { NEST_RULES } from './resilience.messages.js';
import { enableAsyncContextPropagation } from './execution/resilience-context.storage.js';
import { RESILIENCE_MODULE_OPTIONS } from './resilience.module-definition.js';
import type { ResilienceModuleOptions } from './resilience-module-options.interface.js';
import { RESILIENCE_STORE_HANDLE, type ResilienceStoreHandle } from './resilience-store.factory.js';

type Bindings = Map<ResilienceMethodMetadata, ResilienceMethodBinding>;

/**
 * Finds every decorated method of every provider and controller when the module starts — or on the first
 * call of a decorated method of one of the application's instances, if that comes first (a testing
 * module that is only compiled) — composes its pipeline, binds it to the instance, and logs each method's
 * pipeline at debug level. Every problem of every pipeline and every decorator is reported in one error
 * that fails the start. Request-scoped and transient classes are bound through their prototype.
 *
 * @internal
 */
@Injectable()
export class ResilienceExplorer implements OnModuleInit, OnApplicationShutdown, FirstCallBinder {
  private readonly logger = new Logger('ResilienceModule');
  private readonly prototypesBound: object[] = [];
  /** Instances bound so far (binding twice would replace their pipelines and lose their state). */
  private readonly bound = new WeakSet<object>();
  /** Instances a first call asked about that are not this application's. */
  private readonly foreign = new WeakSet<object>();
  private failure: ResilienceValidationError | undefined;
  private readonly unregister: () => void;

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    @Inject(ResiliencePipelineRegistry) private readonly registry: ResiliencePipelineRegistry,
    @Optional() @Inject(RESILIENCE_MODULE_OPTIONS) private readonly options?: ResilienceModuleOptions,
    @Optional() @Inject(RESILIENCE_STORE_HANDLE) private readonly storeHandle?: ResilienceStoreHandle,
    @Optional() @Inject(RESILIENCE_STARTUP_ISSUES) private readonly startupIssues?: OptionsValidator,
  ) {
    this.unregister = registerFirstCallBinder(this);
  }

  onModuleInit(): void {
    if (this.options?.asyncContextPropagation) enableAsyncContextPropagation();
    this.bindAll();
  }

  bindOnFirstCall(instance: object): boolean {
    if (this.foreign.has(instance)) return false;
    if (!this.owns(instance)) {
      this.foreign.add(instance);
      return false;
    }
    this.bindAll();
    return true;
  }

  /** Binds every instance not bound yet; throws the one start-up error when anything is invalid. */
  private bindAll(): void {
    if (this.failure) throw this.failure;
    const v = new OptionsValidator('');
    v.addIssues(this.startupIssues?.problems ?? []);
    for (const wrapper of this.wrappers()) this.bindWrapper(wrapper, v);
    if (!v.isValid) {
      this.failure = new ResilienceValidationError(v.problems, 'Invalid resilience configuration');
      throw this.failure;
    }
  }

  private wrappers(): InstanceWrapper<unknown>[] {
    return [...this.discovery.getProviders(), ...this.discovery.getControllers()];
  }

  private owns(instance: object): boolean {
    const prototype = Object.getPrototypeOf(instance) as unknown;
    return this.wrappers().some(
      (w) =>
        w.instance === instance ||
        (!(w.isDependencyTreeStatic() && !w.isTransient) &&
          (w.metatype as { prototype?: unknown })?.prototype === prototype),
    );
  }

  async onApplicationShutdown(): Promise<void> {
    this.unregister();
    for (const prototype of this.prototypesBound) delete (prototype as Record<symbol, unknown>)[RESILIENCE_BINDINGS];
    await this.registry.dispose();
    await this.storeHandle?.close();
  }

  private bindWrapper(wrapper: InstanceWrapper<unknown>, v: OptionsValidator): void {
    const instance = wrapper.instance as object | undefined;
    const metatype = wrapper.metatype;
    if (!metatype || !instance || typeof instance !== 'object' || this.bound.has(instance)) return;
    this.bound.add(instance);
    const prototype = Object.getPrototypeOf(instance) as object;
    const isStatic = wrapper.isDependencyTreeStatic() && !wrapper.isTransient;
    let bindings: Bindings | undefined;
    for (const methodName of this.scanner.getAllMethodNames(prototype)) {
      const meta = getResilienceMethodMetadata((prototype as Record<string, unknown>)[methodName]);
      if (!meta) continue;
      const returnType = Reflect.getMetadata('design:returntype', prototype, methodName) as unknown;
      // No declared type (type-only import, inferred, plain JS; `Object` for the first): the value decides.
      const returnsObservable =
        returnType === undefined || returnType === Object
          ? undefined
          : returnType === Observable || isObservableClass(returnType);
      const plan = planMethodPipeline(meta, instance, this.registry, returnsObservable, v);
      if (!plan) continue;
      bindings ??= this.bindingsFor(isStatic ? instance : prototype, isStatic, v, `${meta.className}`);
      bindings?.set(meta, plan.binding);
      this.logger.debug(plan.description);
    }
  }

  private bindingsFor(target: object, own: boolean, v: OptionsValidator, className: string): Bindings | undefined {
    const holder = target as Record<symbol, Bindings | undefined>;
    if (Object.prototype.hasOwnProperty.call(holder, RESILIENCE_BINDINGS)) {
      if (!own) {
        v.add(className, 'request-scoped', NEST_RULES.boundElsewhere);
        return undefined;
      }
      return holder[RESILIENCE_BINDINGS];
    }
    const bindings: Bindings = new Map();
    Object.defineProperty(target, RESILIENCE_BINDINGS, { value: bindings, configurable: true });
    if (!own) this.prototypesBound.push(target);
    return bindings;
  }
}

function isObservableClass(type: unknown): boolean {
  return (
    typeof type === 'function' &&
    typeof (type.prototype as { subscribe?: unknown } | undefined)?.subscribe === 'function'
  );
}
