import type { CallHandler, ExecutionContext } from '@nestjs/common';
import type { Observable } from 'rxjs';
import { ResilienceContext, setCriticality, type Criticality, type ResiliencePipeline } from '../../core/index.js';
import { pipelineObservable } from './observable.util.js';
import { currentResilienceContext, runInResilienceContext } from './resilience-context.storage.js';
import type { RawResponse } from './response-cancellation.scope.js';
import { callerCriticality } from './route-criticality.js';

/**
 * Runs an intercepted handler through `pipeline`: each attempt subscribes to the handler anew and
 * collects its values, under a context named `operationKey`, cancelled when the HTTP client goes away
 * (or the subscriber unsubscribes), with `deadline` — by default the deadline of the context the
 * interceptor itself runs in (an outer interceptor's), if any — and `criticality`, by default that
 * context's too.
 *
 * @internal
 */
export function runInterceptedHandler(
  pipeline: ResiliencePipeline<unknown>,
  operationKey: string,
  context: ExecutionContext,
  next: CallHandler,
  deadline: number | undefined = currentResilienceContext()?.deadline,
  criticality: Criticality | undefined = callerCriticality(currentResilienceContext()),
): Observable<unknown> {
  const response =
    context.getType() === 'http'
      ? context.switchToHttp().getResponse<{ raw?: RawResponse } & RawResponse>()
      : undefined;
  const raw = response?.raw ?? response;
  return pipelineObservable(raw, (scope, onCancel) => {
    const resilienceContext = new ResilienceContext({ operationKey, cancellation: scope, deadline });
    if (criticality !== undefined) setCriticality(resilienceContext, criticality);
    // Each attempt subscribes to the handler anew. No abort listener is needed: strategies read the
    // scope (which sees a closed connection), and an unsubscribe ends the running attempt directly.
    const runAttempt = (ctx: ResilienceContext) =>
      new Promise<unknown[]>((resolve, reject) => {
        const values: unknown[] = [];
        runInResilienceContext(ctx, () => {
          onCancel(
            next.handle().subscribe({
              next: (value) => values.push(value),
              error: reject,
              complete: () => resolve(values),
            }),
          );
        });
      });
    return pipeline.execute(runAttempt, resilienceContext);
  });
}
