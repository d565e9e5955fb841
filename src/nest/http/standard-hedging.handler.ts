import type { HttpService } from '@nestjs/axios';
import type { AxiosRequestConfig, AxiosResponse } from 'axios';
import {
  BrokenCircuitError,
  getTimestamp,
  isBrokenCircuitError,
  isIsolatedCircuitError,
  OptionsValidator,
  ResilienceContext,
  ResiliencePropertyKey,
  ResilienceValidationError,
  setCriticality,
  type CircuitBreakerConfig,
  type Criticality,
  type HedgingActionGeneratorArguments,
  type RateLimiterConfig,
  type ResiliencePipeline,
  type ResiliencePipelineBuilder,
  type ResilienceStrategy,
  type StrategyBuilderContext,
  type StrategyNext,
  type TimeoutConfig,
  outcomeFromError,
  outcomeFromValue,
  type Outcome,
} from '../../core/index.js';
import { type PipelineConfig, type ResiliencePipelineRegistry } from '../../config/index.js';
import {
  EndpointRouter,
  validateEndpointRouting,
  type EndpointRouting,
  type RoutedEndpoint,
} from './endpoint-groups.routing.js';
import {
  handleHttpFailure,
  HTTP_REQUEST_INFO,
  exposeRetryAfter,
  STANDARD_HTTP_PIPELINE_DEFAULTS,
  type HttpRequestInfo,
} from './standard-http-pipeline.js';
import { NEST_RULES } from '../resilience.messages.js';
import { checkAttemptTimeout } from '../options/standard-pipeline.options.js';
import { remainingBudget, requestBudgetHeaders } from '../deadlines/request-deadline.propagation.js';

/**
 * The standard hedging handler of Microsoft.Extensions.Http.Resilience, as options: total timeout →
 * hedging → per endpoint: concurrency limiter → circuit breaker → attempt timeout.
 *
 * @publicApi
 */
export interface StandardHedgingHandlerOptions {
  /** The endpoint groups the attempts go to (one group per attempt). */
  routing: EndpointRouting;
  /** The whole request, every hedged attempt included. Default 30000 ms. */
  totalTimeout?: TimeoutConfig | false;
  /** The hedging strategy: hedged attempts and the delay before each. */
  hedging?: {
    /** Hedged attempts besides the primary one, 1 … 10. Default 1. */
    maxHedgedAttempts?: number;
    /**
     * `latency` (default): the next endpoint after `delay` without an answer, or at once on a failure;
     * `fallback`: the next endpoint only after a failure.
     */
    mode?: 'latency' | 'fallback';
    /** Latency mode: how long to wait for an attempt before hedging (0: every hedge at once). Default 2000 ms. */
    delay?: number;
  };
  /** The strategies each endpoint has for itself (one instance per endpoint authority). */
  endpoint?: {
    /** Default: 1,000 concurrent requests per endpoint, no queue. */
    rateLimiter?: RateLimiterConfig | false;
    /** Default: 10 % failures over 30 s, at least 100 calls, 5 s break. */
    circuitBreaker?: CircuitBreakerConfig | false;
    /** Default 10000 ms. */
    attemptTimeout?: TimeoutConfig | false;
  };
  /** Random source in [0, 1) for weighted routing. Default `Math.random`. */
  random?: () => number;
}

/** The standard hedging handler's defaults (Microsoft.Extensions.Http.Resilience's). @publicApi */
export const STANDARD_HEDGING_HANDLER_DEFAULTS = {
  totalTimeout: 30_000,
  hedging: { maxHedgedAttempts: 1, mode: 'latency', delay: 2_000 },
  endpoint: {
    rateLimiter: STANDARD_HTTP_PIPELINE_DEFAULTS.rateLimiter,
    circuitBreaker: STANDARD_HTTP_PIPELINE_DEFAULTS.circuitBreaker,
    attemptTimeout: 10_000,
  },
} as const;

/** The endpoint (`scheme://host:port`) an attempt went to: set on the attempt's context. @publicApi */
export const HTTP_ENDPOINT = new ResiliencePropertyKey<string>('nest-resilience.http.endpoint');

/** The payload of the `OnEndpointAttempt` telemetry event. @publicApi */
export interface EndpointAttemptEventArguments {
  /** `scheme://host:port` of the endpoint: never the path or query of the request. */
  readonly endpoint: string;
  /** 0 for the primary attempt, 1 for the first hedge, … */
  readonly attemptNumber: number;
  /** The attempt's outcome. */
  readonly outcome: Outcome<unknown>;
  /** How long the attempt took, in milliseconds. */
  readonly duration: number;
  /** The endpoint's circuit was open: no request was sent, the attempt moved on to the next endpoint. */
  readonly skipped: boolean;
}

declare module '../../core/index.js' {
  interface ResilienceEventMap {
    /** One attempt of the standard hedging handler finished at an endpoint. */
    OnEndpointAttempt: EndpointAttemptEventArguments;
  }
}

/** The endpoints of one request, handed out to its attempts in order. */
class EndpointPlan {
  private index = 0;
  /** Failures of attempts, in the order they settled. */
  readonly failures: unknown[] = [];

  constructor(
    private readonly endpoints: readonly RoutedEndpoint[],
    readonly hedgeable: boolean,
  ) {}

  get hasNext(): boolean {
    return this.index < this.endpoints.length;
  }

  next(): RoutedEndpoint | undefined {
    return this.endpoints[this.index++];
  }
}

const ENDPOINT_PLAN = new ResiliencePropertyKey<EndpointPlan>('nest-resilience.http.endpoint-plan');

/** What a request inherits from the call it is made in, and whether its attempts pass the budget on. @internal */
export interface HedgedCaller {
  /** The caller's deadline, on the registry's clock. */
  readonly deadline?: number;
  /** The caller's criticality (not `default`). */
  readonly criticality?: Criticality;
  /** Each attempt sends the budget left before its deadline (and the criticality) in headers. */
  readonly propagateDeadline?: boolean;
}

/** Validates the options; every problem goes to `v`. @internal */
export function validateStandardHedgingOptions(parent: OptionsValidator, key: string, options: unknown): void {
  if (typeof options !== 'object' || options === null) {
    parent.add(key, options, NEST_RULES.objectWithRouting);
    return;
  }
  const v = parent.child(key);
  const o = options as StandardHedgingHandlerOptions;
  v.knownKeys(o, ['routing', 'totalTimeout', 'hedging', 'endpoint', 'random']).func('random', o.random);
  validateEndpointRouting(v, 'routing', o.routing);
  const h = o.hedging ?? {};
  const hv = v.child('hedging');
  hv.knownKeys(h, ['maxHedgedAttempts', 'mode', 'delay'])
    .number('maxHedgedAttempts', h.maxHedgedAttempts, { min: 1, max: 10, integer: true })
    .oneOf('mode', h.mode, ['latency', 'fallback'])
    .duration('delay', h.delay);
  if (h.mode === 'fallback' && h.delay !== undefined) hv.add('delay', h.delay, NEST_RULES.latencyModeOnly);
  const e = o.endpoint ?? {};
  v.child('endpoint').knownKeys(e, ['rateLimiter', 'circuitBreaker', 'attemptTimeout']);
  const total = timeoutOf(o.totalTimeout, STANDARD_HEDGING_HANDLER_DEFAULTS.totalTimeout);
  const attempt = timeoutOf(e.attemptTimeout, STANDARD_HEDGING_HANDLER_DEFAULTS.endpoint.attemptTimeout);
  checkAttemptTimeout(v, 'endpoint.', total, attempt, endpointBreaker(e.circuitBreaker));
}

function timeoutOf(t: TimeoutConfig | false | undefined, fallback: number): number | undefined {
  if (t === false) return undefined;
  if (t === undefined) return fallback;
  return typeof t === 'number' ? t : t.timeout;
}

function endpointBreaker(given: CircuitBreakerConfig | false | undefined): CircuitBreakerConfig | undefined {
  const d = STANDARD_HEDGING_HANDLER_DEFAULTS.endpoint.circuitBreaker;
  if (given === false) return undefined;
  // Another kind of breaker keeps only the defaults that apply to every kind.
  if (given?.kind !== undefined && given.kind !== d.kind) return { breakDuration: d.breakDuration, ...given };
  return { ...d, ...given };
}

/** The outer pipeline's configuration: total timeout → hedging. */
function outerConfig(o: StandardHedgingHandlerOptions): PipelineConfig {
  const d = STANDARD_HEDGING_HANDLER_DEFAULTS;
  const fallbackMode = o.hedging?.mode === 'fallback';
  return {
    totalTimeout: o.totalTimeout === false ? undefined : (o.totalTimeout ?? d.totalTimeout),
    hedging: {
      maxHedgedAttempts: o.hedging?.maxHedgedAttempts ?? d.hedging.maxHedgedAttempts,
      delay: fallbackMode ? -1 : (o.hedging?.delay ?? d.hedging.delay),
      shouldHandle: handleHttpFailure,
      actionGenerator: hedgeWhilePlanned,
    },
  };
}

/** Each endpoint's configuration: concurrency limiter → circuit breaker → attempt timeout. */
function endpointConfig(o: StandardHedgingHandlerOptions): PipelineConfig {
  const d = STANDARD_HEDGING_HANDLER_DEFAULTS.endpoint;
  const e = o.endpoint ?? {};
  const breaker = endpointBreaker(e.circuitBreaker);
  return {
    rateLimiter: e.rateLimiter === false ? undefined : (e.rateLimiter ?? { ...d.rateLimiter }),
    circuitBreaker: breaker ? { shouldHandle: handleHttpFailure, ...breaker } : undefined,
    timeout: e.attemptTimeout === false ? undefined : (e.attemptTimeout ?? d.attemptTimeout),
  };
}

/** A hedge starts only for a request that may be repeated and while an endpoint is left. */
function hedgeWhilePlanned(
  args: HedgingActionGeneratorArguments<unknown>,
): ((context: ResilienceContext) => Promise<unknown>) | undefined {
  const plan = args.primaryContext.properties.get(ENDPOINT_PLAN);
  if (!plan?.hedgeable || !plan.hasNext) return undefined;
  return args.callback;
}

/** Reports every attempt an endpoint gets (or skips), naming the endpoint by its authority. */
class EndpointAttemptStrategy implements ResilienceStrategy<unknown> {
  constructor(
    private readonly endpoint: string,
    private readonly builder: StrategyBuilderContext,
  ) {}

  async execute(next: StrategyNext<unknown>, context: ResilienceContext): Promise<unknown> {
    const { telemetry, timeProvider } = this.builder;
    if (!telemetry.wants('OnEndpointAttempt')) return next(context);
    const timed = telemetry.timesDuration('OnEndpointAttempt');
    const started = timed ? getTimestamp(timeProvider) : 0;
    const report = (outcome: Outcome<unknown>, skipped: boolean): void =>
      telemetry.report('OnEndpointAttempt', outcome.ok ? 'information' : 'warning', context, {
        endpoint: this.endpoint,
        attemptNumber: context.attemptNumber,
        outcome,
        duration: timed ? getTimestamp(timeProvider) - started : 0,
        skipped,
      });
    try {
      const value = await next(context);
      report(outcomeFromValue(value), false);
      return value;
    } catch (error) {
      report(outcomeFromError(error), isBrokenCircuitError(error) || isIsolatedCircuitError(error));
      throw error;
    }
  }
}

/**
 * Runs the requests of one client over endpoint groups: the pipelines `http-hedging:<client>` (total
 * timeout → hedging) and `http-hedging:<client>:endpoint` (one instance per endpoint authority).
 *
 * @internal
 */
export class StandardHedgingHandler {
  private readonly router: EndpointRouter;
  private readonly outer: ResiliencePipeline<unknown>;
  private readonly endpointPipelines = new Map<string, ResiliencePipeline<unknown>>();
  /** Until when an endpoint that sent `Retry-After` goes last in the plans. */
  private readonly coolingUntil = new Map<string, number>();

  private constructor(
    private readonly http: HttpService,
    private readonly registry: ResiliencePipelineRegistry,
    options: StandardHedgingHandlerOptions,
    readonly pipelineName: string,
  ) {
    this.router = new EndpointRouter(options.routing, options.random);
    const outer = outerConfig(options);
    const endpoint = endpointConfig(options);
    this.outer = registry.getOrAddPipeline(pipelineName, (b) => applyOrThrow(registry, b, outer));
    for (const e of this.router.endpoints) {
      if (this.endpointPipelines.has(e.authority)) continue;
      const pipeline = registry.getOrAddPipeline(
        `${pipelineName}:endpoint`,
        (b, { key }) => {
          b.addStrategy({
            type: 'http-endpoint',
            options: {},
            create: (_o, context) => new EndpointAttemptStrategy(key ?? '', context),
          });
          applyOrThrow(registry, b, endpoint);
        },
        e.authority,
      );
      this.endpointPipelines.set(e.authority, pipeline);
    }
  }

  /**
   * Creates the handler for options that passed `validateStandardHedgingOptions`, after a dry build that
   * reports the strategies' own problems under `path` to `root`; `undefined` when there are any.
   */
  static create(
    http: HttpService,
    registry: ResiliencePipelineRegistry,
    options: StandardHedgingHandlerOptions,
    pipelineName: string,
    root: OptionsValidator,
    path: string,
  ): StandardHedgingHandler | undefined {
    const v = root.child(path);
    const before = v.problems.length;
    // A dry build reports the strategies' own problems (a bad circuit breaker option, …) with their paths.
    for (const [section, config] of [
      ['', outerConfig(options)],
      ['endpoint', endpointConfig(options)],
    ] as const) {
      const issues = new OptionsValidator(section ? `${path}.${section}` : path);
      const builder = registry.createBuilder<unknown>(pipelineName, undefined, section ? `${path}.${section}` : path);
      registry.applyConfig(builder, config, issues);
      v.addIssues(issues.problems);
      try {
        if (issues.isValid) builder.build();
      } catch (error) {
        if (!(error instanceof ResilienceValidationError)) throw error;
        v.addIssues(error.issues);
      }
    }
    if (v.problems.length > before) return undefined;
    return new StandardHedgingHandler(http, registry, options, pipelineName);
  }

  /** The pipeline of one endpoint (by authority): its circuit, limiter and attempt timeout. */
  endpointPipeline(authority: string): ResiliencePipeline<unknown> | undefined {
    return this.endpointPipelines.get(authority);
  }

  async execute<T, D>(
    config: AxiosRequestConfig<D>,
    info: HttpRequestInfo,
    signal: AbortSignal | undefined,
    operationKey: string,
    caller: HedgedCaller = {},
  ): Promise<AxiosResponse<T, D>> {
    const context = new ResilienceContext({ operationKey, signal, deadline: caller.deadline });
    if (caller.criticality !== undefined) setCriticality(context, caller.criticality);
    const plan = new EndpointPlan(this.plan(), info.retryable);
    context.properties.set(HTTP_REQUEST_INFO, info);
    context.properties.set(ENDPOINT_PLAN, plan);
    try {
      const propagate = caller.propagateDeadline === true;
      return await this.outer.execute<AxiosResponse<T, D>>(
        (ctx) => this.attempt<T, D>(ctx, plan, config, propagate ? caller.criticality : undefined, propagate),
        context,
      );
    } catch (error) {
      // Every endpoint failed: the caller sees the last failure, as after a retry.
      throw plan.failures.includes(error) ? plan.failures[plan.failures.length - 1] : error;
    }
  }

  /** The routing's plan; endpoints that asked to be left alone (`Retry-After`) go last. */
  private plan(): RoutedEndpoint[] {
    const planned = this.router.plan();
    if (this.coolingUntil.size === 0) return planned;
    const now = this.registry.timeProvider.now();
    for (const [authority, until] of this.coolingUntil) if (until <= now) this.coolingUntil.delete(authority);
    const cooling = (e: RoutedEndpoint): boolean => this.coolingUntil.has(e.authority);
    return [...planned.filter((e) => !cooling(e)), ...planned.filter(cooling)];
  }

  /** One attempt: the next endpoint of the plan whose circuit admits it (open ones are skipped, not tried). */
  private async attempt<T, D>(
    ctx: ResilienceContext,
    plan: EndpointPlan,
    config: AxiosRequestConfig<D>,
    criticality: Criticality | undefined,
    propagate: boolean,
  ): Promise<AxiosResponse<T, D>> {
    let broken: unknown;
    for (let endpoint = plan.next(); endpoint; endpoint = plan.next()) {
      const target = endpoint;
      ctx.properties.set(HTTP_ENDPOINT, target.authority);
      try {
        const pipeline = this.endpointPipelines.get(target.authority)!;
        return await pipeline.execute<AxiosResponse<T, D>>((c) => {
          // What is left before this attempt's deadline: the total's, tightened by the attempt timeout.
          const sent = propagate
            ? requestBudgetHeaders(remainingBudget(c, this.registry.timeProvider), criticality)
            : undefined;
          return this.send<T, D>(target, config, c.signal, sent);
        }, ctx);
      } catch (error) {
        if (isBrokenCircuitError(error) || isIsolatedCircuitError(error)) {
          broken = error;
          continue;
        }
        plan.failures.push(error);
        throw error;
      }
    }
    throw broken ?? new BrokenCircuitError('No endpoint is left for this attempt.');
  }

  /** Sends a fresh copy of the request to `endpoint`, with the attempt's signal and budget headers. */
  private async send<T, D>(
    endpoint: RoutedEndpoint,
    config: AxiosRequestConfig<D>,
    signal: AbortSignal,
    budgetHeaders: Record<string, string> | undefined,
  ): Promise<AxiosResponse<T, D>> {
    const headers = { ...(config.headers as Record<string, unknown> | undefined), ...budgetHeaders };
    const attempt: AxiosRequestConfig<D> = {
      ...config,
      baseURL: undefined,
      url: endpointUrl(endpoint.url, config.url ?? ''),
      headers: headers as AxiosRequestConfig['headers'],
      signal,
    };
    try {
      return await this.http.axiosRef.request<T, AxiosResponse<T, D>, D>(attempt);
    } catch (error) {
      const retryAfter = exposeRetryAfter(error, this.registry.timeProvider);
      // The endpoint asked for time: the others take its requests meanwhile, nobody waits.
      if (retryAfter !== undefined)
        this.coolingUntil.set(endpoint.authority, this.registry.timeProvider.now() + retryAfter);
      throw error;
    }
  }
}

/** The request's path and query on the endpoint's base URL (whose own path is a prefix). */
export function endpointUrl(base: URL, requestUrl: string): string {
  let path = requestUrl;
  try {
    const absolute = new URL(requestUrl);
    path = `${absolute.pathname}${absolute.search}`;
  } catch {
    // relative: kept as given
  }
  const prefix = base.pathname.replace(/\/+$/, '');
  return `${base.origin}${prefix}${path.startsWith('/') || path === '' ? '' : '/'}${path}`;
}

function applyOrThrow(
  registry: ResiliencePipelineRegistry,
  builder: ResiliencePipelineBuilder<unknown>,
  config: PipelineConfig,
): void {
  const issues = new OptionsValidator('');
  registry.applyConfig(builder, config, issues);
  issues.throwIfInvalid('Invalid standard hedging handler');
}
