import {
  Inject,
  Injectable,
  Optional,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { Observable } from 'rxjs';
import { ResilienceContext, ResiliencePipelineRegistry, type ResiliencePipeline } from '../core/internal.js';
import { getResilienceMethodMetadata } from './decorators/resilience-method.metadata.js';
import { collectObservable } from './observable.util.js';
import { RESILIENCE_MODULE_OPTIONS } from './resilience.module-definition.js';
import type { ResilienceModuleOptions } from './resilience-module-options.interface.js';
import { RESILIENCE_PIPELINE_METADATA } from './resilience.constants.js';
import { runInResilienceContext } from './resilience-context.storage.js';

type RawResponse = NodeJS.EventEmitter & { writableFinished?: boolean };

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
  private readonly cache = new WeakMap<object, ResiliencePipeline<unknown> | null>();

  constructor(
    private readonly reflector: Reflector,
    @Inject(ResiliencePipelineRegistry) private readonly registry: ResiliencePipelineRegistry,
    @Optional() @Inject(RESILIENCE_MODULE_OPTIONS) private readonly options?: ResilienceModuleOptions,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const pipeline = this.pipelineFor(context);
    if (!pipeline) return next.handle();
    const response =
      context.getType() === 'http'
        ? context.switchToHttp().getResponse<{ raw?: RawResponse } & RawResponse>()
        : undefined;
    const raw = response?.raw ?? response;
    const operationKey = `${context.getClass().name}.${context.getHandler().name}`;
    return new Observable<unknown>((subscriber) => {
      const controller = new AbortController();
      const onClose = (): void => {
        if (!raw?.writableFinished)
          controller.abort(new DOMException('The client closed the connection.', 'AbortError'));
      };
      raw?.once('close', onClose);
      const resilienceContext = new ResilienceContext({ operationKey, signal: controller.signal });
      pipeline
        .execute(
          (ctx) => runInResilienceContext(ctx, () => collectObservable(next.handle(), ctx.signal)),
          resilienceContext,
        )
        .then(
          (values) => {
            raw?.removeListener('close', onClose);
            for (const value of values) subscriber.next(value);
            subscriber.complete();
          },
          (error: unknown) => {
            raw?.removeListener('close', onClose);
            subscriber.error(error);
          },
        );
      return () => controller.abort(new DOMException('The subscriber unsubscribed.', 'AbortError'));
    });
  }

  private pipelineFor(context: ExecutionContext): ResiliencePipeline<unknown> | undefined {
    const handler = context.getHandler();
    const cached = this.cache.get(handler);
    if (cached !== undefined) return cached ?? undefined;
    let pipeline: ResiliencePipeline<unknown> | null = null;
    if (!getResilienceMethodMetadata(handler)) {
      const name =
        this.reflector.getAllAndOverride<string | undefined>(RESILIENCE_PIPELINE_METADATA, [
          handler,
          context.getClass(),
        ]) ?? this.options?.defaultInterceptorPipeline;
      if (name !== undefined) pipeline = this.registry.getPipeline(name);
    }
    this.cache.set(handler, pipeline);
    return pipeline ?? undefined;
  }
}
