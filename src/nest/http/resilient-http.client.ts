import type { HttpService } from '@nestjs/axios';
import { isAxiosError, type AxiosRequestConfig, type AxiosResponse } from 'axios';
import { defer, from, type Observable } from 'rxjs';
import { ResilienceContext, setCriticality, type ResiliencePipeline } from '../../core/index.js';
import { type ResiliencePipelineRegistry } from '../../config/index.js';
import { currentResilienceContext } from '../execution/resilience-context.storage.js';
import { callerCriticality } from '../execution/route-criticality.js';
import { markUpstreamFailure, type UpstreamFailure } from '../exceptions/upstream-failure.mapping.js';
import { remainingBudget, requestBudgetHeaders } from '../deadlines/request-deadline.propagation.js';
import { httpOperationKey } from './http-operation.key.js';
import type { StandardHedgingHandler } from './standard-hedging.handler.js';
import { exposeRetryAfter, HTTP_REQUEST_INFO, IDEMPOTENT_METHODS } from './standard-http-pipeline.js';

/** How a client was configured (resolved from the module options). @internal */
export interface ResilientHttpClientSettings {
  /** The client's name (`ResilientHttpModule`'s `name`): the first part of its operation keys. */
  readonly name: string;
  /** The registry pipeline every request runs through. */
  readonly pipeline: string;
  /** One pipeline instance (and circuit) per scheme + host + port. */
  readonly perAuthority: boolean;
  /** Statuses that count as failures besides 408, 429 and 5xx (e.g. 404). */
  readonly failureStatusCodes: readonly number[];
  /** Treat POST and PATCH as safe to repeat. */
  readonly idempotent: boolean;
  /** The standard hedging handler the requests go through instead of `pipeline`, when configured. */
  readonly hedging?: StandardHedgingHandler;
  /** Mark failures after the pipeline for the exception filter's 502 / 504. */
  readonly upstreamErrorMapping?: boolean;
  /** Each attempt sends the budget left before its deadline in `x-request-deadline-ms`. */
  readonly propagateDeadline: boolean;
}

/** Per-request options on top of axios'. @publicApi */
export interface ResilientRequestConfig<D = unknown> extends AxiosRequestConfig<D> {
  /** This request may be repeated although its method is unsafe (POST, PATCH). */
  idempotent?: boolean;
  /**
   * Cancels the request (and its retries) from outside. Default: the signal of the decorated method (or
   * intercepted handler) making the request, when it is made before that method's first `await`.
   */
  signal?: AbortSignal;
  /**
   * The route template this request's URL was built from, e.g. `'/users/{id}'`: the operation key becomes
   * `<client> <METHOD> <routeTemplate>` instead of `<client> <METHOD> <host>`. Only a label for telemetry:
   * the request still goes to `url` (a query string or fragment in the template is left out of the key).
   */
  routeTemplate?: string;
  /**
   * The operation key of this request's context, as is (in logs, metrics, spans, the dashboard), instead
   * of the client's default. Keep it low-cardinality: no ids, paths or query values.
   */
  operationKey?: string;
}

/**
 * An HTTP client whose requests run through a named resilience pipeline, built on `@nestjs/axios`. Each
 * attempt sends a fresh copy of the request with the attempt's abort signal, so a timeout or a client
 * disconnect cancels the socket. Promise methods (`get`, `post`, …) and Observable ones (`get$`, …).
 *
 * @publicApi
 */
export class ResilientHttpClient {
  constructor(
    /** The underlying `@nestjs/axios` service (its axios instance carries the client's defaults). */
    readonly http: HttpService,
    private readonly registry: ResiliencePipelineRegistry,
    private readonly settings: ResilientHttpClientSettings,
  ) {}

  /** Sends a request through the pipeline; resolves with the response, rejects with the final error. */
  request<T = unknown, D = unknown>(config: ResilientRequestConfig<D>): Promise<AxiosResponse<T, D>> {
    const { idempotent, signal, routeTemplate, operationKey, ...axiosConfig } = config;
    const method = (axiosConfig.method ?? 'GET').toUpperCase();
    const retryable =
      IDEMPOTENT_METHODS.has(method) ||
      idempotent === true ||
      this.settings.idempotent ||
      hasIdempotencyKey(axiosConfig.headers);
    // Inside a decorated method or an intercepted handler, the request inherits that call's signal, so a
    // client that disconnects (or an enclosing timeout) cancels the socket too.
    const outer = currentResilienceContext();
    const parent = signal ?? outer?.signal;
    const hedging = this.settings.hedging;
    // The caller's criticality goes with the request (and, with its budget, to the service called).
    const criticality = callerCriticality(outer);
    // The key names the client, the method and the route template or host: never a path or query value.
    const keyOf = (url: string): string =>
      typeof operationKey === 'string'
        ? operationKey
        : httpOperationKey(
            this.settings.name,
            method,
            url,
            typeof routeTemplate === 'string' ? routeTemplate : undefined,
          );
    if (hedging) {
      const info = {
        method,
        url: axiosConfig.url ?? '',
        retryable,
        failureStatusCodes: this.settings.failureStatusCodes,
      };
      const caller = { deadline: outer?.deadline, criticality, propagateDeadline: this.settings.propagateDeadline };
      // The endpoints decide the host (an absolute URL's own is replaced): the key has none.
      return this.mapped(hedging.execute<T, D>(axiosConfig, info, parent, keyOf(''), caller), keyOf(''));
    }
    const url = this.resolveUrl(axiosConfig.url);
    // The caller's deadline (and so its budget, sent on each attempt) and criticality go with the request.
    const context = new ResilienceContext({ operationKey: keyOf(url), signal: parent, deadline: outer?.deadline });
    if (criticality !== undefined) setCriticality(context, criticality);
    context.properties.set(HTTP_REQUEST_INFO, {
      method,
      url,
      retryable,
      failureStatusCodes: this.settings.failureStatusCodes,
    });
    const sent = this.pipelineFor(url).execute<AxiosResponse<T, D>>(async (ctx) => {
      const headers = { ...(axiosConfig.headers as Record<string, unknown> | undefined) };
      if (this.settings.propagateDeadline) {
        Object.assign(headers, requestBudgetHeaders(remainingBudget(ctx, this.registry.timeProvider), criticality));
      }
      const attempt: AxiosRequestConfig<D> = {
        ...axiosConfig,
        headers: headers as AxiosRequestConfig['headers'],
        signal: ctx.signal,
      };
      try {
        return await this.http.axiosRef.request<T, AxiosResponse<T, D>, D>(attempt);
      } catch (error) {
        // Expose the server's Retry-After (429, 503) to the retry strategy and to the caller.
        exposeRetryAfter(error, this.registry.timeProvider);
        throw error;
      }
    }, context);
    return this.mapped(sent, context.operationKey);
  }

  /** Sends a `GET` request through the pipeline. */
  get<T = unknown>(url: string, config?: ResilientRequestConfig): Promise<AxiosResponse<T>> {
    return this.request<T>({ ...config, url, method: 'GET' });
  }

  /** Sends a `DELETE` request through the pipeline. */
  delete<T = unknown>(url: string, config?: ResilientRequestConfig): Promise<AxiosResponse<T>> {
    return this.request<T>({ ...config, url, method: 'DELETE' });
  }

  /** Sends a `HEAD` request through the pipeline. */
  head<T = unknown>(url: string, config?: ResilientRequestConfig): Promise<AxiosResponse<T>> {
    return this.request<T>({ ...config, url, method: 'HEAD' });
  }

  /** Sends a `POST` request through the pipeline (retried only when marked idempotent: an `Idempotency-Key` header, or `idempotent` on the request or the client). */
  post<T = unknown, D = unknown>(
    url: string,
    data?: D,
    config?: ResilientRequestConfig<D>,
  ): Promise<AxiosResponse<T, D>> {
    return this.request<T, D>({ ...config, url, data, method: 'POST' });
  }

  /** Sends a `PUT` request through the pipeline. */
  put<T = unknown, D = unknown>(
    url: string,
    data?: D,
    config?: ResilientRequestConfig<D>,
  ): Promise<AxiosResponse<T, D>> {
    return this.request<T, D>({ ...config, url, data, method: 'PUT' });
  }

  /** Sends a `PATCH` request through the pipeline (retried only when marked idempotent: an `Idempotency-Key` header, or `idempotent` on the request or the client). */
  patch<T = unknown, D = unknown>(
    url: string,
    data?: D,
    config?: ResilientRequestConfig<D>,
  ): Promise<AxiosResponse<T, D>> {
    return this.request<T, D>({ ...config, url, data, method: 'PATCH' });
  }

  /** The Observable form of `request`: each subscription sends the request (with its retries) anew. */
  request$<T = unknown, D = unknown>(config: ResilientRequestConfig<D>): Observable<AxiosResponse<T, D>> {
    return defer(() => from(this.request<T, D>(config)));
  }

  /** The Observable form of `get`: each subscription sends the request (with its retries) anew. */
  get$<T = unknown>(url: string, config?: ResilientRequestConfig): Observable<AxiosResponse<T>> {
    return this.request$<T>({ ...config, url, method: 'GET' });
  }

  /** The Observable form of `post`: each subscription sends the request (with its retries) anew. */
  post$<T = unknown, D = unknown>(
    url: string,
    data?: D,
    config?: ResilientRequestConfig<D>,
  ): Observable<AxiosResponse<T, D>> {
    return this.request$<T, D>({ ...config, url, data, method: 'POST' });
  }

  /**
   * The pipeline requests to `url` run through (one per authority unless configured otherwise); for the
   * hedging handler, the pipeline of the endpoint `url` names (its circuit), or else the outer one.
   */
  pipelineFor(url: string): ResiliencePipeline<unknown> {
    const hedging = this.settings.hedging;
    if (hedging) return hedging.endpointPipeline(authorityOf(url)) ?? this.registry.getPipeline(hedging.pipelineName);
    if (!this.settings.perAuthority) return this.registry.getPipeline(this.settings.pipeline);
    return this.registry.getPipeline(this.settings.pipeline, authorityOf(url));
  }

  /** With `upstreamErrorMapping`, marks the final failure for the exception filter (see `upstreamFailure`). */
  private mapped<R>(sent: Promise<R>, operationKey: string | undefined): Promise<R> {
    if (!this.settings.upstreamErrorMapping) return sent;
    return sent.catch((error: unknown) => {
      const failure = upstreamFailure(error, operationKey ?? this.settings.name);
      if (failure) markUpstreamFailure(error as object, failure);
      throw error;
    });
  }

  private resolveUrl(url: string | undefined): string {
    const base = this.http.axiosRef.defaults.baseURL;
    try {
      return new URL(url ?? '', base).toString();
    } catch {
      return url ?? base ?? '';
    }
  }
}

/** `scheme://host:port` of a URL: what one circuit covers. @publicApi */
export function authorityOf(url: string): string {
  try {
    const { protocol, host } = new URL(url);
    return `${protocol}//${host}`;
  } catch {
    return 'unknown';
  }
}

/**
 * What an axios failure after the pipeline stands for: 504 for a timeout of axios' own (`timeout`), 502 for
 * an error answer or a connection that failed. A cancelled request (its caller left) and anything that is
 * not an axios error (the engine's rejections have their own mapping) are not marked.
 */
function upstreamFailure(error: unknown, operationKey: string): UpstreamFailure | undefined {
  if (!isAxiosError(error) || error.code === 'ERR_CANCELED') return undefined;
  if (error.code === 'ECONNABORTED' || error.code === 'ETIMEDOUT') {
    return { status: 504, error: 'Gateway Timeout', detail: `${operationKey} timed out (${error.code})` };
  }
  const what =
    error.response !== undefined
      ? `answered ${error.response.status}`
      : `could not be reached (${error.code ?? error.message})`;
  return { status: 502, error: 'Bad Gateway', detail: `${operationKey} ${what}` };
}

function hasIdempotencyKey(headers: unknown): boolean {
  if (!headers || typeof headers !== 'object') return false;
  return Object.keys(headers).some((name) => name.toLowerCase() === 'idempotency-key');
}
