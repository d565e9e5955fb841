import { Inject, Module, type DynamicModule } from '@nestjs/common';
import { APP_FILTER, DiscoveryModule } from '@nestjs/core';
import { ResiliencePipelineRegistry, type PipelineConfig } from '../core/index.js';
import type { TelemetryListener } from '../core/index.js';
import {
  attachRegistry,
  moduleTelemetryListeners,
  RESILIENCE_EVENT_STREAM,
} from './observability/telemetry-listeners.factory.js';
import { ResilienceExceptionFilter } from './resilience-exception.filter.js';
import {
  createResilienceStore,
  RESILIENCE_STORE_HANDLE,
  type ResilienceStoreHandle,
} from './resilience-store.factory.js';
import { ResilienceExplorer } from './resilience.explorer.js';
import { ResilienceInterceptor } from './resilience.interceptor.js';
import { ConfigurableResilienceModule, RESILIENCE_MODULE_OPTIONS } from './resilience.module-definition.js';
import type { ResilienceModuleOptions } from './resilience-module-options.interface.js';
import { CIRCUIT_BREAKER_STATE_STORE, RESILIENCE_TIME_PROVIDER } from './resilience.constants.js';

/**
 * Named resilience pipelines for a Nest application: `forRoot(options)` / `forRootAsync({ useFactory,
 * inject, imports })` once (global by default), `forFeature(pipelines)` in feature modules. Provides the
 * `ResiliencePipelineRegistry`, binds `@Retry`, `@CircuitBreaker`, `@Fallback`, `@Timeout` and
 * `@UseResiliencePipeline` on providers and controllers, and maps rejections to HTTP statuses.
 *
 * @property forRoot - Configures the module once for the application: `ResilienceModuleOptions` plus
 *   `isGlobal` (default true). Every pipeline and decorator is validated when the application starts.
 * @property forRootAsync - `forRoot` with options from `useFactory` (with `inject` and `imports`),
 *   `useClass` or `useExisting`, for example from `ConfigService`.
 * @publicApi
 */
@Module({
  imports: [DiscoveryModule],
  providers: [
    {
      provide: RESILIENCE_STORE_HANDLE,
      inject: [RESILIENCE_MODULE_OPTIONS],
      useFactory: (options: ResilienceModuleOptions) => createResilienceStore(options),
    },
    {
      provide: ResiliencePipelineRegistry,
      inject: [RESILIENCE_MODULE_OPTIONS, RESILIENCE_STORE_HANDLE, { token: RESILIENCE_EVENT_STREAM, optional: true }],
      useFactory: async (
        options: ResilienceModuleOptions,
        handle: ResilienceStoreHandle,
        eventStream: TelemetryListener | undefined,
      ) => {
        try {
          const telemetryListeners = moduleTelemetryListeners(options, eventStream);
          const registry = new ResiliencePipelineRegistry({
            pipelines: options.pipelines,
            predicates: options.predicates,
            stateStore: handle.store,
            distributedLimiter: handle.distributedLimiter,
            timeProvider: options.timeProvider,
            telemetryListeners,
          });
          attachRegistry(telemetryListeners, registry);
          return registry;
        } catch (error) {
          await handle.close(); // a start that fails leaves no connection behind
          throw error;
        }
      },
    },
    {
      provide: CIRCUIT_BREAKER_STATE_STORE,
      inject: [ResiliencePipelineRegistry],
      useFactory: (r: ResiliencePipelineRegistry) => r.stateStore,
    },
    {
      provide: RESILIENCE_TIME_PROVIDER,
      inject: [ResiliencePipelineRegistry],
      useFactory: (r: ResiliencePipelineRegistry) => r.timeProvider,
    },
    ResilienceExplorer,
    ResilienceInterceptor,
    { provide: APP_FILTER, useClass: ResilienceExceptionFilter },
  ],
  exports: [
    ResiliencePipelineRegistry,
    CIRCUIT_BREAKER_STATE_STORE,
    RESILIENCE_TIME_PROVIDER,
    ResilienceInterceptor,
    RESILIENCE_MODULE_OPTIONS,
    RESILIENCE_STORE_HANDLE,
  ],
})
export class ResilienceModule extends ConfigurableResilienceModule {
  /**
   * Registers more named pipelines from a feature module, validated when the application starts. Needs
   * `ResilienceModule.forRoot…` (global) in the application.
   */
  static forFeature(pipelines: Record<string, PipelineConfig>): DynamicModule {
    const token = Symbol('nest-resilience:feature');
    return {
      module: ResilienceFeatureModule,
      providers: [
        {
          provide: token,
          inject: [ResiliencePipelineRegistry],
          useFactory: (registry: ResiliencePipelineRegistry) => {
            registry.addPipelines(pipelines);
            return pipelines;
          },
        },
      ],
    };
  }
}

/** The module behind `forFeature`. @internal */
@Module({})
export class ResilienceFeatureModule {}

/** Injects the module's `CircuitBreakerStateStore`. @publicApi */
export const InjectCircuitBreakerStateStore = (): PropertyDecorator & ParameterDecorator =>
  Inject(CIRCUIT_BREAKER_STATE_STORE);
