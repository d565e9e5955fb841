export {
  ResilienceContext,
  type ResilienceCallback,
  type ResilienceContextOptions,
} from './context/resilience.context.js';
export { ResiliencePropertyKey, ResilienceProperties } from './context/resilience-property.key.js';
export { outcomeFromError, outcomeFromValue, unwrapOutcome } from './outcome.model.js';
export type { Outcome, SuccessOutcome, FailureOutcome } from './outcome.model.js';
export {
  anyOf,
  handleAllErrors,
  handleError,
  handleResult,
  handleTransientNetworkErrors,
  isTransientNetworkError,
  TRANSIENT_NETWORK_ERROR_CODES,
  type OutcomePredicate,
} from './outcome.predicates.js';
export {
  BrokenCircuitError,
  getRetryAfter,
  isBrokenCircuitError,
  isCancellationError,
  isIsolatedCircuitError,
  isRateLimiterRejectedError,
  isResilienceError,
  isTimeoutRejectedError,
  IsolatedCircuitError,
  RateLimiterRejectedError,
  ResilienceError,
  TimeoutRejectedError,
  type ResilienceErrorSource,
} from './resilience.errors.js';
export {
  ResilienceValidationError,
  MAX_TIMER_DELAY,
  type ValidationIssue,
  OptionsValidator,
} from './utils/options.validation.js';
export { TimeProvider, SystemTimeProvider, systemTimeProvider, type TimerHandle } from './time/time.provider.js';
export type {
  ResilienceEvent,
  ResilienceEventMap,
  ResilienceEventSeverity,
  ResilienceTelemetrySource,
  TelemetryListener,
  ExecutionAttemptEventArguments,
  RetryEventArguments,
  RetryGiveUpEventArguments,
  TimeoutEventArguments,
  FallbackEventArguments,
  PipelineExecutedEventArguments,
} from './telemetry/resilience-event.model.js';
export { StrategyTelemetry } from './telemetry/strategy.telemetry.js';
export { ResiliencePipeline } from './pipeline/resilience.pipeline.js';
export {
  builtInStrategies,
  ResiliencePipelineBuilder,
  type ResiliencePipelineBuilderOptions,
  type StrategyRegistration,
} from './pipeline/resilience-pipeline.builder.js';
export type { ResilienceStrategy, StrategyBuilderContext, StrategyNext } from './pipeline/resilience.strategy.js';
export {
  DEFAULT_RETRY_BACKOFF_TYPE,
  DEFAULT_RETRY_DELAY,
  DEFAULT_RETRY_MAX_ATTEMPTS,
  computeBackoffDelay,
  clampDelay,
  type BackoffOptions,
  type BackoffState,
  type BackoffType,
  type OnRetryArguments,
  type RetryDelayGeneratorArguments,
  type RetryPredicateArguments,
  type RetryStrategyOptions,
  RetryBudget,
  type RetryBudgetOptions,
} from './retry/index.js';
export {
  DEFAULT_TIMEOUT,
  type OnTimeoutArguments,
  type TimeoutGeneratorArguments,
  type TimeoutMode,
  type TimeoutStrategyOptions,
} from './timeout/index.js';
export type { FallbackArguments, FallbackStrategyOptions } from './fallback/index.js';
export * from './circuit-breaker/index.js';
export type { CircuitOpenedEventArguments, CircuitClosedEventArguments } from './telemetry/resilience-event.model.js';
export * from './registry/index.js';
export {
  getHttpRetryAfter,
  getHttpStatus,
  handleTransientHttp,
  isTransientHttpStatus,
  parseRetryAfter,
} from './http/http.predicates.js';
export * from './rate-limiter/index.js';
export * from './hedging/index.js';
export * from './chaos/index.js';
