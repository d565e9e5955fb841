import { SetMetadata } from '@nestjs/common';
import {
  type AdaptiveConcurrencyConfig,
  type AdaptiveThrottlingConfig,
  type CircuitBreakerConfig,
  type Criticality,
  type ConcurrencyLimiterConfig,
  HedgingConfig,
  PredicateReference,
  RateLimiterConfig,
  RetryConfig,
  TimeoutStrategyOptions,
} from '../../core/index.js';
import { strategyCatalog } from '../../config/index.js';
import { RESILIENCE_PIPELINE_METADATA } from '../resilience.constants.js';
import { recordMethodCriticality, recordResilienceSection } from './resilience-method.metadata.js';
import { NEST_RULES } from '../resilience.messages.js';

/** A section given by the name of a configured pipeline, or inline. @internal */
export type SectionSpec<T> = { readonly name: string } | { readonly options: T };

/** Options of `@Fallback`: the method (or value) to fall back to, and which failures it handles. @publicApi */
export interface FallbackDecoratorOptions {
  /** A method of the same class called with the original arguments plus the error. */
  method?: string;
  /** A fixed value returned instead (when no `method` is given). */
  value?: unknown;
  /** Which failures fall back. Default: every error except cancellation. */
  shouldHandle?: PredicateReference;
}

function spec<T>(nameOrOptions: string | T | undefined): SectionSpec<T> {
  return typeof nameOrOptions === 'string' ? { name: nameOrOptions } : { options: (nameOrOptions ?? {}) as T };
}

/**
 * Retries the method: with the `retry` section of a configured pipeline (`@Retry('orders')`) or with
 * inline options (`@Retry({ maxRetryAttempts: 3, backoffType: 'exponential' })`).
 *
 * @publicApi
 */
export function Retry(nameOrOptions?: string | RetryConfig): MethodDecorator {
  return recordResilienceSection('Retry', 'retry', spec(nameOrOptions));
}

/**
 * Guards the method with a circuit breaker: the `circuitBreaker` section of a configured pipeline — and
 * then the same circuit as that pipeline and every method naming it — or inline options (a circuit of its
 * own per method).
 *
 * @publicApi
 */
export function CircuitBreaker(nameOrOptions?: string | CircuitBreakerConfig): MethodDecorator {
  return recordResilienceSection('CircuitBreaker', 'circuitBreaker', spec(nameOrOptions));
}

/**
 * Bounds each attempt of the method (it composes inside `@Retry`, see `STRATEGY_CATALOG`): milliseconds,
 * options, or the `timeout` section of a configured pipeline (by name). Not `@nestjs/schedule`'s `@Timeout`.
 *
 * @publicApi
 */
export function AttemptTimeout(timeoutOrNameOrOptions: number | string | TimeoutStrategyOptions): MethodDecorator {
  const value =
    typeof timeoutOrNameOrOptions === 'number' ? { timeout: timeoutOrNameOrOptions } : timeoutOrNameOrOptions;
  return recordResilienceSection('AttemptTimeout', 'timeout', spec(value));
}

/**
 * The former name of `@AttemptTimeout`, which `@nestjs/schedule`'s `@Timeout` shadows where both are
 * imported.
 *
 * @deprecated Use `@AttemptTimeout`: the same decorator.
 * @publicApi
 */
export const Timeout = AttemptTimeout;

/**
 * Replaces a failure of the method: `@Fallback('cachedOrders')` calls `this.cachedOrders(...args, error)`
 * (a method taking the original arguments plus the error, or the error alone); options may give a fixed
 * `value` or a `shouldHandle` predicate instead. A missing method or a wrong arity fails the application
 * start.
 *
 * @publicApi
 */
export function Fallback(methodOrOptions: string | FallbackDecoratorOptions): MethodDecorator {
  const options = typeof methodOrOptions === 'string' ? { method: methodOrOptions } : methodOrOptions;
  return recordResilienceSection('Fallback', 'fallback', options);
}

/**
 * Runs the method (or, on a class, every handler the `ResilienceInterceptor` sees) through a whole
 * named pipeline.
 *
 * @publicApi
 */
export function UseResiliencePipeline(name: string): MethodDecorator & ClassDecorator {
  const setMetadata = SetMetadata(RESILIENCE_PIPELINE_METADATA, name);
  return ((target: object, key?: string | symbol, descriptor?: PropertyDescriptor) => {
    if (key === undefined || descriptor === undefined) {
      setMetadata(target as never);
      return;
    }
    return recordResilienceSection('UseResiliencePipeline', 'pipeline', { name })(target, key, descriptor);
  }) as MethodDecorator & ClassDecorator;
}

/**
 * Admits calls of the method within a rate limit: the `rateLimiter` section of a configured pipeline
 * (one limiter shared by every method naming it) or inline options (a limiter per method).
 * Rejections become 429 with `Retry-After`.
 *
 * @publicApi
 */
export function RateLimit(nameOrOptions: string | RateLimiterConfig): MethodDecorator {
  return recordResilienceSection('RateLimit', 'rateLimiter', spec(nameOrOptions));
}

/**
 * Limits concurrent calls of the method (the bulkhead): a permit count, options with a queue, or the
 * `concurrencyLimiter` section of a configured pipeline (shared by every method naming it).
 *
 * @publicApi
 */
export function ConcurrencyLimit(nameOrLimit: string | ConcurrencyLimiterConfig): MethodDecorator {
  const value = typeof nameOrLimit === 'number' ? { permitLimit: nameOrLimit } : nameOrLimit;
  return recordResilienceSection('ConcurrencyLimit', 'concurrencyLimiter', spec(value));
}

/** Another name for `@ConcurrencyLimit`. @publicApi */
export const Bulkhead = ConcurrencyLimit;

/**
 * Limits concurrent calls of the method with a limit that follows measured latency (Gradient2 or
 * AIMD): an initial limit, options, or the `adaptiveConcurrency` section of a configured pipeline
 * (shared by every method naming it). Rejections become 429; `sheddable` calls go first.
 *
 * @publicApi
 */
export function AdaptiveConcurrencyLimit(nameOrOptions?: string | AdaptiveConcurrencyConfig): MethodDecorator {
  const value = typeof nameOrOptions === 'number' ? { initialLimit: nameOrOptions } : nameOrOptions;
  return recordResilienceSection('AdaptiveConcurrencyLimit', 'adaptiveConcurrency', spec(value));
}

/**
 * `@WithCriticality('sheddable')`: sets the criticality of every call of the method (`critical`, `default`, `sheddable`): the limiters
 * of its pipeline shed `sheddable` calls first and keep room for `critical` ones. For an HTTP route, a
 * request's criticality header (`x-criticality` by default, the module option `criticalityHeader`)
 * overrides it.
 *
 * @publicApi
 */
export function WithCriticality(criticality: Criticality): MethodDecorator {
  return recordMethodCriticality(criticality);
}

/**
 * Throttles the method's calls on the client side while the dependency refuses requests (Google SRE's
 * adaptive throttling): the `adaptiveThrottling` section of a configured pipeline, or inline options
 * (a window per method). Local rejections throw `AdaptiveThrottlingRejectedError` (a 429 in a handler).
 *
 * @publicApi
 */
export function AdaptiveThrottling(nameOrOptions?: string | AdaptiveThrottlingConfig): MethodDecorator {
  return recordResilienceSection('AdaptiveThrottling', 'adaptiveThrottling', spec(nameOrOptions));
}

/**
 * Hedges the method: starts another attempt when one is slow (or fails), the first acceptable outcome
 * wins, the others are cancelled. A pipeline name or inline options.
 *
 * @publicApi
 */
export function Hedging(nameOrOptions?: string | HedgingConfig): MethodDecorator {
  return recordResilienceSection('Hedging', 'hedging', spec(nameOrOptions));
}

/**
 * The decorator of a catalog section (a strategy of one's own registered with `registerStrategy`):
 * `export const Toy = strategyDecorator<ToyConfig>('toy')`, then `@Toy({ … })` or `@Toy('pipelineName')`
 * (that pipeline's section). It composes at the section's place in the catalog, as the built-in ones do.
 *
 * @publicApi
 */
export function strategyDecorator<TConfig>(sectionName: string): (nameOrOptions?: string | TConfig) => MethodDecorator {
  return (nameOrOptions) => {
    const line = strategyCatalog().find((l) => l.name === sectionName && l.decorator !== undefined);
    if (!line) throw new Error(NEST_RULES.noDecoratedSection(sectionName));
    return recordResilienceSection(line.decorator!, sectionName, spec(nameOrOptions));
  };
}
