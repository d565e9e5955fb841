import { Catch, HttpStatus, Inject, Logger, Optional, type ArgumentsHost } from '@nestjs/common';
import { BaseExceptionFilter, HttpAdapterHost } from '@nestjs/core';
import { throwError, type Observable } from 'rxjs';
import {
  BrokenCircuitError,
  isBrokenCircuitError,
  isIsolatedCircuitError,
  isRateLimiterRejectedError,
  isTimeoutRejectedError,
  IsolatedCircuitError,
  RateLimiterRejectedError,
  TimeoutRejectedError,
} from '../../core/index.js';
import { RESILIENCE_MODULE_OPTIONS } from '../options/resilience.module-definition.js';
import type { ResilienceModuleOptions } from '../options/resilience-module-options.interface.js';
import { publicResilienceMessage } from '../resilience-public.message.js';
import { isGrpcCallArgs, toResilienceGrpcError } from '../microservices/resilience-grpc.error.js';
import { toResilienceRpcError } from '../microservices/resilience-rpc.error.js';
import { MarkedUpstreamFailure, upstreamFailureOf } from './upstream-failure.mapping.js';

/** The HTTP answer for a resilience rejection. @publicApi */
export interface ResilienceHttpError {
  /** The HTTP status: 503, 429 or 504. */
  readonly status: number;
  /** The status's reason phrase, e.g. `Service Unavailable`. */
  readonly error: string;
  /** Seconds for the `Retry-After` header, when known. */
  readonly retryAfterSeconds: number | undefined;
}

/**
 * How the engine's rejections map to HTTP: an open or isolated circuit → 503, a rate limiter → 429 (both
 * with `Retry-After` in whole seconds, rounded up, when known), a timeout → 504. Anything else:
 * `undefined`.
 *
 * @publicApi
 */
export function toResilienceHttpError(error: unknown): ResilienceHttpError | undefined {
  const retryAfterSeconds = (ms: number | undefined) =>
    ms === undefined ? undefined : Math.max(1, Math.ceil(ms / 1_000));
  if (isIsolatedCircuitError(error)) {
    return { status: HttpStatus.SERVICE_UNAVAILABLE, error: 'Service Unavailable', retryAfterSeconds: undefined };
  }
  if (isBrokenCircuitError(error)) {
    return {
      status: HttpStatus.SERVICE_UNAVAILABLE,
      error: 'Service Unavailable',
      retryAfterSeconds: retryAfterSeconds(error.retryAfter),
    };
  }
  if (isRateLimiterRejectedError(error)) {
    return {
      status: HttpStatus.TOO_MANY_REQUESTS,
      error: 'Too Many Requests',
      retryAfterSeconds: retryAfterSeconds(error.retryAfter),
    };
  }
  if (isTimeoutRejectedError(error)) {
    return { status: HttpStatus.GATEWAY_TIMEOUT, error: 'Gateway Timeout', retryAfterSeconds: undefined };
  }
  return undefined;
}

/**
 * Answers resilience rejections with the right HTTP status and `Retry-After` (see
 * `toResilienceHttpError`), on Express and Fastify alike. Registered globally by `ResilienceModule`
 * unless `httpErrorMapping: false`; other errors go on to Nest's own handling. In an RPC handler
 * (`@MessagePattern`, `@EventPattern`) the reply is the `ResilienceRpcError` payload at once (see
 * `toResilienceRpcError`), or Nest's RPC answer for an unknown error when the mapping is off. A gRPC
 * handler's call ends with the gRPC status of the rejection instead — `DEADLINE_EXCEEDED` for a timeout
 * or a spent deadline, `UNAVAILABLE` for an open or isolated circuit, `RESOURCE_EXHAUSTED` for a rate
 * limiter — and the payload's message as its details. A request of
 * a resilient HTTP client registered with `upstreamErrorMapping` that failed after its retries is answered
 * 502 Bad Gateway (504 Gateway Timeout for a timeout), with one warning line instead of the whole error.
 *
 * @publicApi
 */
@Catch(BrokenCircuitError, IsolatedCircuitError, RateLimiterRejectedError, TimeoutRejectedError, MarkedUpstreamFailure)
export class ResilienceExceptionFilter extends BaseExceptionFilter {
  private readonly logger = new Logger('ResilienceModule');

  constructor(
    private readonly adapterHost: HttpAdapterHost,
    @Optional() @Inject(RESILIENCE_MODULE_OPTIONS) private readonly options?: ResilienceModuleOptions,
  ) {
    super(adapterHost.httpAdapter);
  }

  /** Answers a resilience rejection with its status (`toResilienceHttpError`), or in an RPC handler with its `ResilienceRpcError` payload. */
  override catch(exception: unknown, host: ArgumentsHost): Observable<never> | void {
    // An RPC context has no HTTP adapter and wants an Observable that errors with the reply.
    if (host.getType() === 'rpc') return this.catchRpc(exception, host);
    const upstream = this.options?.httpErrorMapping === false ? undefined : upstreamFailureOf(exception);
    if (upstream && host.getType() === 'http' && this.adapterHost.httpAdapter) {
      this.logger.warn(`${upstream.status} ${upstream.error}: ${upstream.detail}`);
      const message =
        upstream.status === 504 ? 'The upstream service did not answer in time.' : 'The upstream service failed.';
      const body = { statusCode: upstream.status, error: upstream.error, message };
      this.adapterHost.httpAdapter.reply(host.switchToHttp().getResponse<unknown>(), body, upstream.status);
      return;
    }
    const mapped = this.options?.httpErrorMapping === false ? undefined : toResilienceHttpError(exception);
    const adapter = this.adapterHost.httpAdapter;
    if (!mapped || host.getType() !== 'http' || !adapter) {
      super.catch(exception, host);
      return;
    }
    const response = host.switchToHttp().getResponse<unknown>();
    // The full error (circuit key, instance key, upstream URL) is for operators only.
    this.logger.debug(`${mapped.status} ${mapped.error}: ${(exception as Error).message}`);
    if (mapped.retryAfterSeconds !== undefined)
      adapter.setHeader(response, 'Retry-After', String(mapped.retryAfterSeconds));
    const message = publicResilienceMessage(exception, this.options?.publicNames);
    adapter.reply(response, { statusCode: mapped.status, error: mapped.error, message }, mapped.status);
  }

  private catchRpc(exception: unknown, host: ArgumentsHost): Observable<never> {
    const payload =
      this.options?.httpErrorMapping === false ? undefined : toResilienceRpcError(exception, this.options?.publicNames);
    // grpc-js takes a numeric `code` as the call's status; the payload's would end it as UNKNOWN.
    if (payload && isGrpcCallArgs(host.getArgs())) return throwError(() => toResilienceGrpcError(payload));
    if (payload) return throwError(() => payload);
    // What Nest's own RPC filter answers for an error that is not an `RpcException`.
    rpcLogger.error(exception);
    return throwError(() => ({ status: 'error', message: 'Internal server error' }));
  }
}

const rpcLogger = new Logger('RpcExceptionsHandler');
