import {
  Inject,
  Injectable,
  Optional,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Observable } from 'rxjs';
import type { ResiliencePipeline } from '../../core/index.js';
import { ResiliencePipelineRegistry } from '../../config/index.js';
import { getResilienceMethodMetadata } from '../decorators/resilience-method.metadata.js';
import { RESILIENCE_MODULE_OPTIONS } from '../options/resilience.module-definition.js';
import type { ResilienceModuleOptions } from '../options/resilience-module-options.interface.js';
import { RESILIENCE_PIPELINE_METADATA } from '../resilience.constants.js';
import { runInterceptedHandler } from '../execution/intercepted-handler.runner.js';

/**
 * Runs whole handlers through a named pipeline: the one named by `@UseResiliencePipeline` on the handler
 * or its controller, else the module's `defaultInterceptorPipeline`. Use it on controllers
 * (`@UseInterceptors(ResilienceInterceptor)`) or globally (`APP_INTERCEPTOR`). Handlers with their own
 * resilience decorators are left to them. Each attempt re-subscribes to the handler; a client that
 * disconnects (or an unsubscribe) cancels the call.
 *
 * @publicApi
 */
@Injectable()
export class ResilienceInterceptor implements NestInterceptor {
  private readonly cache = new WeakMap<object, HandlerPlan | null>();

  constructor(
    private readonly reflector: Reflector,
    @Inject(ResiliencePipelineRegistry) private readonly registry: ResiliencePipelineRegistry,
    @Optional() @Inject(RESILIENCE_MODULE_OPTIONS) private readonly options?: ResilienceModuleOptions,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const plan = this.planFor(context);
    if (!plan) return next.handle();
    return runInterceptedHandler(plan.pipeline, plan.operationKey, context, next);
  }

  private planFor(context: ExecutionContext): HandlerPlan | undefined {
    const handler = context.getHandler();
    const cached = this.cache.get(handler);
    if (cached !== undefined) return cached ?? undefined;
    let plan: HandlerPlan | null = null;
    if (!getResilienceMethodMetadata(handler)) {
      const name =
        this.reflector.getAllAndOverride<string | undefined>(RESILIENCE_PIPELINE_METADATA, [
          handler,
          context.getClass(),
        ]) ?? this.options?.defaultInterceptorPipeline;
      if (name !== undefined) {
        plan = {
          pipeline: this.registry.getPipeline(name),
          operationKey: `${context.getClass().name}.${handler.name}`,
        };
      }
    }
    this.cache.set(handler, plan);
    return plan ?? undefined;
  }
}

interface HandlerPlan {
  readonly pipeline: ResiliencePipeline<unknown>;
  readonly operationKey: string;
}
