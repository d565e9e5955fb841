import { Inject, Module, type DynamicModule, type NestModule } from '@nestjs/common';
import { APP_FILTER, DiscoveryModule } from '@nestjs/core';
import {
  OptionsValidator,
  systemTimeProvider,
  type CircuitBreakerStateStore,
  type TelemetryListener,
  type TimeProvider,
} from '../../core/index.js';
import { ResiliencePipelineRegistry, type PipelineConfigData } from '../../config/index.js';
import { attachRegistry, moduleTelemetryListeners, RESILIENCE_EVENT_STREAM } from './telemetry-listeners.factory.js';
import { ResilienceExceptionFilter } from '../exceptions/resilience-exception.filter.js';
import {
  createResilienceStore,
  RESILIENCE_STORE_HANDLE,
  type ResilienceStoreHandle,
} from '../store/resilience-store.factory.js';
import { ResilienceExplorer } from './resilience.explorer.js';
import { ResilienceInterceptor } from './resilience.interceptor.js';
import { ResilienceThrottler } from '../throttle/resilience.throttler.js';
import {
  ConfigurableResilienceModule,
  RESILIENCE_MODULE_OPTIONS,
  type RESILIENCE_OPTIONS_TYPE,
} from '../options/resilience.module-definition.js';
import type { ResilienceModuleOptions } from '../options/resilience-module-options.interface.js';
import {
  CIRCUIT_BREAKER_STATE_STORE,
  RESILIENCE_STARTUP_ISSUES,
  RESILIENCE_TIME_PROVIDER,
} from '../resilience.constants.js';

/**
 * Named resilience pipelines for a Nest application: `forRoot(options)` / `forRootAsync({ useFactory,
 * inject, imports })` once (global by default), `forFeature(pipelines)` in feature modules. Provides the
 * `ResiliencePipelineRegistry`, binds `@Retry`, `@CircuitBreaker`, `@Fallback`, `@Timeout` and the other
 * decorators on providers and controllers when the application initialises, and maps rejections to HTTP
 * statuses.
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
    // The clock and the store are tokens the registry reads, so a test can override either.
    {
      provide: RESILIENCE_TIME_PROVIDER,
      inject: [RESILIENCE_MODULE_OPTIONS],
      useFactory: (options: ResilienceModuleOptions) => options.timeProvider ?? systemTimeProvider,
    },
    {
      provide: RESILIENCE_STORE_HANDLE,
      inject: [RESILIENCE_MODULE_OPTIONS, RESILIENCE_TIME_PROVIDER],
      useFactory: (options: ResilienceModuleOptions, timeProvider: TimeProvider) =>
        createResilienceStore({ ...options, timeProvider }),
    },
    {
      provide: CIRCUIT_BREAKER_STATE_STORE,
      inject: [RESILIENCE_STORE_HANDLE],
      useFactory: (handle: ResilienceStoreHandle) => handle.store,
    },
    // Problems of every pipeline (forRoot and every forFeature), reported with the decorators' at start-up.
    { provide: RESILIENCE_STARTUP_ISSUES, useFactory: () => new OptionsValidator('') },
    {
      provide: ResiliencePipelineRegistry,
      inject: [
        RESILIENCE_MODULE_OPTIONS,
        RESILIENCE_STORE_HANDLE,
        RESILIENCE_TIME_PROVIDER,
        CIRCUIT_BREAKER_STATE_STORE,
        RESILIENCE_STARTUP_ISSUES,
        { token: RESILIENCE_EVENT_STREAM, optional: true },
      ],
      useFactory: async (
        options: ResilienceModuleOptions,
        handle: ResilienceStoreHandle,
        timeProvider: TimeProvider,
        stateStore: CircuitBreakerStateStore,
        issues: OptionsValidator,
        eventStream: TelemetryListener | undefined,
      ) => {
        try {
          const telemetryListeners = moduleTelemetryListeners(options, eventStream);
          const registry = new ResiliencePipelineRegistry({
            predicates: options.predicates,
            stateStore,
            distributedLimiter: handle.distributedLimiter,
            adaptiveThrottlingStore: handle.adaptiveThrottlingStore,
            timeProvider,
            telemetryListeners,
          });
          if (options.pipelines !== undefined) registry.addPipelines(options.pipelines, issues);
          attachRegistry(telemetryListeners, registry);
          return registry;
        } catch (error) {
          await handle.close(); // a start that fails leaves no connection behind
          throw error;
        }
      },
    },
    ResilienceExplorer,
    ResilienceInterceptor,
    ResilienceThrottler,
    { provide: APP_FILTER, useClass: ResilienceExceptionFilter },
  ],
  exports: [
    ResiliencePipelineRegistry,
    ResilienceThrottler,
    CIRCUIT_BREAKER_STATE_STORE,
    RESILIENCE_TIME_PROVIDER,
    ResilienceInterceptor,
    RESILIENCE_MODULE_OPTIONS,
    RESILIENCE_STORE_HANDLE,
    RESILIENCE_STARTUP_ISSUES,
  ],
})
export class ResilienceModule extends ConfigurableResilienceModule implements NestModule {
  /** @internal Nest creates the module. */
  constructor(@Inject(ResilienceExplorer) private readonly explorer: ResilienceExplorer) {
    super();
  }

  /**
   * Binds the decorated methods of the application. Nest calls it while it registers modules, before
   * it registers HTTP routes — the decorated route handlers are bound in the form the router calls
   * (see `ResilienceExplorer`). Application contexts and microservices do not call it: they are bound
   * in `onModuleInit`. No middleware is configured.
   */
  configure(): void {
    this.explorer.bindBeforeRoutes();
  }

  /**
   * Configures the module once for the application. Without options: no named pipelines yet (add them
   * with `forFeature` or the registry), the in-memory store and the system clock; the decorators work.
   */
  static override forRoot(options: typeof RESILIENCE_OPTIONS_TYPE = {}): DynamicModule {
    return super.forRoot(options);
  }

  /**
   * Registers more named pipelines from a feature module, validated when the application starts (one
   * error for every pipeline and decorator of the application). Needs
   * `ResilienceModule.forRoot…` (global) in the application.
   */
  static forFeature(pipelines: Record<string, PipelineConfigData>): DynamicModule {
    const token = Symbol('nest-resilience:feature');
    return {
      module: ResilienceFeatureModule,
      providers: [
        {
          provide: token,
          inject: [ResiliencePipelineRegistry, RESILIENCE_STARTUP_ISSUES],
          useFactory: (registry: ResiliencePipelineRegistry, issues: OptionsValidator) => {
            registry.addPipelines(pipelines, issues); // reported at start-up with everything else
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
