import { Inject, Injectable, Logger, Optional, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import type { InstanceWrapper } from '@nestjs/core/injector/instance-wrapper.js';
import { Observable } from 'rxjs';
import { OptionsValidator, ResiliencePipelineRegistry } from '../core/index.js';
import { getResilienceMethodMetadata, type ResilienceMethodMetadata } from './decorators/resilience-method.wrapper.js';
import type { ResilienceMethodBinding } from './execution/resilience-method.binding.js';
import { planMethodPipeline } from './method-pipeline.factory.js';
import { RESILIENCE_BINDINGS } from './resilience.constants.js';
import { NEST_RULES } from './resilience.messages.js';
import { enableAsyncContextPropagation } from './execution/resilience-context.storage.js';
import { RESILIENCE_MODULE_OPTIONS } from './resilience.module-definition.js';
import type { ResilienceModuleOptions } from './resilience-module-options.interface.js';
import { RESILIENCE_STORE_HANDLE, type ResilienceStoreHandle } from './resilience-store.factory.js';

type Bindings = Map<ResilienceMethodMetadata, ResilienceMethodBinding>;

/**
 * Finds every decorated method of every provider and controller when the module starts, composes its
 * pipeline (all problems of all methods are reported in one error that fails the start), binds it to the
 * instance, and logs each method's pipeline at debug level. Request-scoped and transient classes are
 * bound through their prototype.
 *
 * @internal
 */
@Injectable()
export class ResilienceExplorer implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('ResilienceModule');
  private readonly prototypesBound: object[] = [];

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    @Inject(ResiliencePipelineRegistry) private readonly registry: ResiliencePipelineRegistry,
    @Optional() @Inject(RESILIENCE_MODULE_OPTIONS) private readonly options?: ResilienceModuleOptions,
    @Optional() @Inject(RESILIENCE_STORE_HANDLE) private readonly storeHandle?: ResilienceStoreHandle,
  ) {}

  onModuleInit(): void {
    if (this.options?.asyncContextPropagation) enableAsyncContextPropagation();
    const v = new OptionsValidator('');
    const seen = new Set<object>();
    for (const wrapper of [...this.discovery.getProviders(), ...this.discovery.getControllers()]) {
      this.bindWrapper(wrapper, seen, v);
    }
    v.throwIfInvalid('Invalid resilience decorators');
  }

  async onApplicationShutdown(): Promise<void> {
    for (const prototype of this.prototypesBound) delete (prototype as Record<symbol, unknown>)[RESILIENCE_BINDINGS];
    await this.registry.dispose();
    await this.storeHandle?.close();
  }

  private bindWrapper(wrapper: InstanceWrapper<unknown>, seen: Set<object>, v: OptionsValidator): void {
    const instance = wrapper.instance as object | undefined;
    const metatype = wrapper.metatype;
    if (!metatype || !instance || typeof instance !== 'object' || seen.has(instance)) return;
    seen.add(instance);
    const prototype = Object.getPrototypeOf(instance) as object;
    const isStatic = wrapper.isDependencyTreeStatic() && !wrapper.isTransient;
    let bindings: Bindings | undefined;
    for (const methodName of this.scanner.getAllMethodNames(prototype)) {
      const meta = getResilienceMethodMetadata((prototype as Record<string, unknown>)[methodName]);
      if (!meta) continue;
      const returnType = Reflect.getMetadata('design:returntype', prototype, methodName) as unknown;
      const returnsObservable = returnType === Observable || isObservableClass(returnType);
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
