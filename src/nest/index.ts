/**
 * The NestJS layer: `ResilienceModule`, the decorators, `ResilienceInterceptor` and the HTTP mapping of
 * rejections. Needs `@nestjs/common`, `@nestjs/core`, `reflect-metadata` and `rxjs`.
 *
 * @module
 */
export { ResilienceModule, InjectCircuitBreakerStateStore } from './module/resilience.module.js';
export type { ResilienceModuleOptions } from './options/resilience-module-options.interface.js';
export { RESILIENCE_MODULE_OPTIONS } from './options/resilience.module-definition.js';
export { CIRCUIT_BREAKER_STATE_STORE, RESILIENCE_TIME_PROVIDER } from './resilience.constants.js';
export {
  Retry,
  CircuitBreaker,
  Fallback,
  AttemptTimeout,
  Timeout,
  UseResiliencePipeline,
  RateLimit,
  ConcurrencyLimit,
  Bulkhead,
  Hedging,
  strategyDecorator,
  AdaptiveConcurrencyLimit,
  WithCriticality,
  AdaptiveThrottling,
  type FallbackDecoratorOptions,
} from './decorators/resilience.decorators.js';
export { DEFAULT_CRITICALITY_HEADER } from './execution/route-criticality.js';
export {
  RESILIENCE_DECORATOR_ORDER,
  type DecoratorSectionName,
  type ResilienceSection,
} from './decorators/resilience-method.metadata.js';
export { ResilienceInterceptor } from './module/resilience.interceptor.js';
export {
  GRPC_TIMEOUT_HEADER,
  parseGrpcTimeout,
  parseRequestBudget,
  readRequestBudget,
  remainingBudget,
  REQUEST_DEADLINE_HEADER,
  RequestDeadlineInterceptor,
} from './deadlines/index.js';
export {
  DEFAULT_THROTTLE_LIMIT,
  ResilienceThrottle,
  ResilienceThrottleGuard,
  ResilienceThrottler,
  SkipResilienceThrottle,
  type ResilienceThrottleDecision,
  type ResilienceThrottleLimit,
  type ResilienceThrottleOptions,
} from './throttle/index.js';
export {
  ResilienceExceptionFilter,
  toResilienceHttpError,
  type ResilienceHttpError,
} from './exceptions/resilience-exception.filter.js';
export { currentResilienceContext } from './execution/resilience-context.storage.js';
export {
  DEFAULT_RESILIENCE_LOG_LEVELS,
  ResilienceLoggerListener,
  type ResilienceEventSummary,
  type ResilienceLogLevel,
  type ResilienceLoggingOptions,
} from './observability/index.js';
export type { RegistryAwareTelemetryListener } from './module/telemetry-listeners.factory.js';
export { publicResilienceMessage } from './resilience-public.message.js';
