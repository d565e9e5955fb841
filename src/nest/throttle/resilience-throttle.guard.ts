import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { HttpAdapterHost, Reflector } from '@nestjs/core';
import { RateLimiterRejectedError, type Criticality } from '../../core/index.js';
import { getResilienceMethodMetadata } from '../decorators/resilience-method.metadata.js';
import { moduleCriticalityHeader, requestCriticality } from '../execution/route-criticality.js';
import { RESILIENCE_THROTTLE_LIMITS, RESILIENCE_THROTTLE_SKIP } from '../resilience.constants.js';
import { RESILIENCE_MODULE_OPTIONS } from '../options/resilience.module-definition.js';
import type { ResilienceModuleOptions } from '../options/resilience-module-options.interface.js';
import { ResilienceThrottler, type ResilienceThrottleDecision } from './resilience.throttler.js';

/**
 * Per-client limits for HTTP routes, from the module option `throttle`: globally
 * (`{ provide: APP_GUARD, useClass: ResilienceThrottleGuard }`) or per controller or route
 * (`@UseGuards(ResilienceThrottleGuard)`). A route applies the limit named `default`, or those its
 * `@ResilienceThrottle(...)` names; `@SkipResilienceThrottle()` exempts it. Every answer carries
 * `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset` (seconds); a request over a limit is
 * turned away with `RateLimiterRejectedError`, which the module answers with 429 and `Retry-After`.
 * Subclass it to change `getTracker`, `shouldSkip` or `throwThrottled`.
 *
 * @publicApi
 */
@Injectable()
export class ResilienceThrottleGuard implements CanActivate {
  private readonly criticalityHeader: string | undefined;

  constructor(
    protected readonly throttler: ResilienceThrottler,
    protected readonly reflector: Reflector,
    protected readonly adapterHost: HttpAdapterHost,
    @Inject(RESILIENCE_MODULE_OPTIONS) options: ResilienceModuleOptions,
  ) {
    this.criticalityHeader = moduleCriticalityHeader(options);
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (context.getType() !== 'http' || (await this.shouldSkip(context))) return true;
    const targets = [context.getHandler(), context.getClass()];
    const named = this.reflector.getAllAndOverride<readonly string[] | undefined>(RESILIENCE_THROTTLE_LIMITS, targets);
    const limits = this.throttler.limitsFor(named);
    if (limits.length === 0) return true;
    const request = context.switchToHttp().getRequest<unknown>();
    if (this.throttler.exemptsCritical && this.criticalityOf(request, context) === 'critical') return true;
    const decision = await this.throttler.take(limits, await this.getTracker(request, context));
    if (decision === undefined) return true;
    if (this.throttler.sendsHeaders) this.setHeaders(context.switchToHttp().getResponse<unknown>(), decision);
    if (!decision.admitted) this.throwThrottled(decision, context);
    return true;
  }

  /** Whether the route is exempt: `@SkipResilienceThrottle()` on the handler, else on its class. */
  protected shouldSkip(context: ExecutionContext): boolean | Promise<boolean> {
    const targets = [context.getHandler(), context.getClass()];
    return this.reflector.getAllAndOverride<boolean | undefined>(RESILIENCE_THROTTLE_SKIP, targets) === true;
  }

  /** The client the request counts for: the module option `throttle.key`, else `request.ip`. */
  protected getTracker(request: unknown, context: ExecutionContext): string | Promise<string> {
    const key = this.throttler.keyOption;
    if (key) return key(request, context);
    const ip = (request as { ip?: unknown }).ip;
    return typeof ip === 'string' ? ip : '';
  }

  /** Turns the request away: `RateLimiterRejectedError` (429 with `Retry-After` through the module's filter). */
  protected throwThrottled(decision: ResilienceThrottleDecision, _context: ExecutionContext): never {
    const error = new RateLimiterRejectedError(
      `The request was rejected by the limit "${decision.limit}".`,
      decision.retryAfter,
      'limit',
    );
    // Named in the 429 body as a pipeline is ("The rate limit of "login" is reached."; `publicNames` applies).
    error.source = { pipelineName: decision.limit, strategyName: undefined };
    throw error;
  }

  /** The request's criticality: its criticality header, else the handler's `@WithCriticality`. */
  private criticalityOf(request: unknown, context: ExecutionContext): Criticality | undefined {
    const fromHeader = this.criticalityHeader ? requestCriticality(request, this.criticalityHeader) : undefined;
    return fromHeader ?? getResilienceMethodMetadata(context.getHandler())?.criticality;
  }

  private setHeaders(response: unknown, decision: ResilienceThrottleDecision): void {
    const adapter = this.adapterHost.httpAdapter;
    adapter.setHeader(response, 'RateLimit-Limit', String(decision.quota));
    if (decision.remaining !== undefined) {
      adapter.setHeader(response, 'RateLimit-Remaining', String(Math.max(0, decision.remaining)));
    }
    if (decision.resetAfter !== undefined) {
      adapter.setHeader(response, 'RateLimit-Reset', String(Math.max(0, Math.ceil(decision.resetAfter / 1_000))));
    }
  }
}
