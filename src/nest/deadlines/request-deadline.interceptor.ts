import {
  Inject,
  Injectable,
  Optional,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import { throwError, type Observable } from 'rxjs';
import {
  DeadlineExceededError,
  ResiliencePipelineBuilder,
  type Criticality,
  type ResiliencePipeline,
} from '../../core/index.js';
import { ResiliencePipelineRegistry } from '../../config/index.js';
import { runInterceptedHandler } from '../execution/intercepted-handler.runner.js';
import { DEFAULT_CRITICALITY_HEADER, requestCriticality } from '../execution/route-criticality.js';
import type { ResilienceModuleOptions } from '../options/resilience-module-options.interface.js';
import { RESILIENCE_MODULE_OPTIONS } from '../options/resilience.module-definition.js';
import { readRequestBudget, takeRequestBudget, takeRequestCriticality } from './request-deadline.propagation.js';
import { readRpcMetadata, smallerBudget } from './rpc-metadata.propagation.js';

/**
 * Makes the budget a caller sends the deadline of the handler's call: the `x-request-deadline-ms` header
 * (milliseconds) or `grpc-timeout` (`100m`, `2S`) of an HTTP request; for an RPC message, the same
 * entries of its transport's metadata (NATS headers, RabbitMQ headers, MQTT 5 user properties, gRPC
 * metadata and the gRPC call's deadline) and the `x-request-deadline-ms` field of its data (taken out
 * before the handler sees the data) — the smallest budget wins.
 *
 * - A spent budget (0 or less) is rejected **before the handler runs**: `DeadlineExceededError`, which
 *   `ResilienceExceptionFilter` answers with 504 (HTTP), the 504 `ResilienceRpcError` payload
 *   with `code: 'DEADLINE_EXCEEDED'` (RPC), or the gRPC status `DEADLINE_EXCEEDED` (gRPC).
 * - Otherwise the handler runs under a context with that deadline: its signal aborts when the deadline
 *   passes, and every pipeline inside — decorated methods, `ResilienceInterceptor`, the resilient HTTP
 *   and RPC clients — sees at most the budget left, and passes it on. A handler that ends because the
 *   deadline aborted it fails with `DeadlineExceededError` (504).
 * - A request without a budget runs as it is.
 *
 * It also reads the caller's criticality — the `x-criticality` header of an HTTP request (the module
 * option `criticalityHeader` renames it, `false` ignores it), the `x-criticality` entry of an RPC
 * message's metadata or else the `x-criticality` field of its data (taken out) — and sets it on the
 * handler's context: the limiters of every pipeline inside shed by it, and the resilient clients pass it
 * on.
 *
 * Inside the handler the context is `currentResilienceContext()` — during its synchronous part, or
 * throughout with `asyncContextPropagation: true`. Use it on controllers
 * (`@UseInterceptors(RequestDeadlineInterceptor)`) or globally (`APP_INTERCEPTOR`), before
 * `ResilienceInterceptor`.
 *
 * @publicApi
 */
@Injectable()
export class RequestDeadlineInterceptor implements NestInterceptor {
  private readonly pipeline: ResiliencePipeline<unknown>;

  private readonly criticalityHeader: string | undefined;

  constructor(
    @Inject(ResiliencePipelineRegistry) private readonly registry: ResiliencePipelineRegistry,
    @Optional() @Inject(RESILIENCE_MODULE_OPTIONS) options?: ResilienceModuleOptions,
  ) {
    const header = options?.criticalityHeader;
    this.criticalityHeader = header === false ? undefined : header ? header.toLowerCase() : DEFAULT_CRITICALITY_HEADER;
    // No strategy: the pipeline only enforces the deadline, on the registry's clock.
    this.pipeline = new ResiliencePipelineBuilder({ timeProvider: registry.timeProvider }).build();
  }

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const budget = this.budgetOf(context);
    const criticality = this.criticalityOf(context);
    if (budget === undefined && criticality === undefined) return next.handle();
    if (budget !== undefined && !(budget > 0)) return throwError(() => new DeadlineExceededError(0));
    const deadline = budget === undefined ? undefined : this.registry.timeProvider.now() + budget;
    const operationKey = `${context.getClass().name}.${context.getHandler().name}`;
    return runInterceptedHandler(this.pipeline, operationKey, context, next, deadline, criticality);
  }

  /** The criticality the caller sent; `undefined` when it sent none (or one that names none). */
  protected criticalityOf(context: ExecutionContext): Criticality | undefined {
    const type = context.getType();
    if (type === 'http') {
      const header = this.criticalityHeader;
      return header ? requestCriticality(context.switchToHttp().getRequest(), header) : undefined;
    }
    if (type === 'rpc') {
      // The data field is taken out either way; the transport's metadata wins over it.
      const field = takeRequestCriticality(context.switchToRpc().getData());
      return readRpcMetadata(context.getArgs()).criticality ?? field;
    }
    return undefined;
  }

  /** The budget the caller sent, in milliseconds; `undefined` when it sent none. */
  protected budgetOf(context: ExecutionContext): number | undefined {
    const type = context.getType();
    if (type === 'http') {
      return readRequestBudget(context.switchToHttp().getRequest<{ headers?: Record<string, unknown> }>().headers);
    }
    if (type === 'rpc') {
      const field = takeRequestBudget(context.switchToRpc().getData());
      return smallerBudget(field, readRpcMetadata(context.getArgs()).budget);
    }
    return undefined;
  }
}
