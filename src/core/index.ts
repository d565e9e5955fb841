/**
 * The engine: pipelines, every strategy (each folder's descriptor), the context and telemetry. It knows
 * no configuration (that is `src/config`) and has no dependencies: it never loads NestJS or an optional
 * peer.
 *
 * @module
 */
export {
  ResilienceContext,
  type ResilienceCallback,
  type ResilienceContextOptions,
} from './context/resilience.context.js';
export type { CancellationSource } from './context/cancellation.scope.js';
export { ResiliencePropertyKey, ResilienceProperties } from './context/resilience-property.key.js';
export {
  CRITICALITIES,
  CRITICALITY_KEY,
  DEFAULT_SHEDDABLE_RATIO,
  getCriticality,
  isCriticality,
  parseCriticality,
  setCriticality,
  type Criticality,
} from './context/criticality.property.js';
export { isCancellation, isCancellationError, isCancellationOutcome } from './context/cancellation.rule.js';
export { outcomeFromError, outcomeFromValue, unwrapOutcome } from './outcome.model.js';
export type { Outcome, SuccessOutcome, FailureOutcome } from './outcome.model.js';
export {
  anyOf,
  type PredicateReference,
  handleAllErrors,
  handleError,
  handleResult,
  handleTransientNetworkErrors,
  isTransientNetworkError,
  TRANSIENT_NETWORK_ERROR_CODES,
  type OutcomePredicate,
  type OutcomePredicateArguments,
} from './outcome.predicates.js';
export {
  BrokenCircuitError,
  DeadlineExceededError,
  getRetryAfter,
  isBrokenCircuitError,
  isDeadlineExceededError,
  isIsolatedCircuitError,
  isRateLimiterRejectedError,
  isResilienceError,
  isResilienceValidationError,
  isTimeoutRejectedError,
  isUnknownPipelineError,
  IsolatedCircuitError,
  RateLimiterRejectedError,
  ResilienceError,
  ResilienceValidationError,
  TimeoutRejectedError,
  UnknownPipelineError,
  type RateLimiterRejectionReason,
  type ResilienceErrorSource,
  type ValidationIssue,
} from './resilience.errors.js';
export { MAX_TIMER_DELAY, OptionsValidator } from './utils/options.validation.js';
export {
  abortReason,
  getElapsedTime,
  getTimestamp,
  SystemTimeProvider,
  systemTimeProvider,
  TimeProvider,
  type TimerHandle,
} from './time/time.provider.js';
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
export {
  describeResilienceEvent,
  EXECUTION_ATTEMPT_EVENT,
  formatEventFacts,
  registerResilienceEvents,
  resilienceEventDescriptor,
  resilienceEventNames,
  resilienceEventOutcome,
  type EventFact,
  type ResilienceEventDescriptor,
  type ResilienceEventDescriptors,
} from './telemetry/event.catalog.js';
export {
  option,
  optionKeys,
  validateOptions,
  type DurationRule,
  type NumberRule,
  type OptionKind,
  type OptionSpec,
  type OptionsSchema,
} from './strategy/options.schema.js';
export { defineStrategy, section, type StrategyDescriptorInput } from './strategy/strategy.descriptor.js';
export { ResiliencePipeline, type ResilienceStrategyDescription } from './pipeline/resilience.pipeline.js';
export {
  builtInStrategies,
  extendPipelineBuilder,
  ResiliencePipelineBuilder,
  strategyRegistration,
  type AddPipelineOptions,
  type BuiltInStrategies,
  type ResiliencePipelineBuilderOptions,
} from './pipeline/resilience-pipeline.builder.js';
export {
  StrategyServiceKey,
  type AnyStrategyDefinition,
  type ResilienceStrategy,
  type StrategyBuilderContext,
  type StrategyDescriptor,
  type StrategyConfigEnvironment,
  type StrategyDefinition,
  type StrategyNext,
  type StrategyPipelineInfo,
  type StrategyPorts,
  type StrategyRegistration,
  type StrategySectionDefinition,
} from './resilience-strategy.interface.js';

export {
  type BackoffOptions,
  type BackoffState,
  type BackoffType,
  type OnRetryArguments,
  type RetryDelayGeneratorArguments,
  type RetryPredicateArguments,
  type RetryStrategyOptions,
  RetryBudget,
  retryRegistration,
  retryStrategy,
  type RetryConfig,
  type RetryBudgetOptions,
} from './retry/index.js';
export {
  DEFAULT_TIMEOUT,
  timeoutRegistration,
  timeoutStrategy,
  type TimeoutConfig,
  type OnTimeoutArguments,
  type TimeoutGeneratorArguments,
  type TimeoutMode,
  type TimeoutStrategyOptions,
} from './timeout/index.js';
export {
  fallbackRegistration,
  fallbackStrategy,
  type FallbackArguments,
  type FallbackConfig,
  type FallbackStrategyOptions,
} from './fallback/index.js';
export {
  CIRCUIT_CONTROL_SERVICE,
  CIRCUIT_SNAPSHOT_VERSION,
  CIRCUIT_STATE_STORE_SERVICE,
  CircuitBreakerManualControl,
  circuitBreakerRegistration,
  circuitBreakerStrategy,
  CircuitBreakerStateProvider,
  defaultCircuitKey,
  InMemoryCircuitBreakerStateStore,
  MAX_WINDOW_SIZE,
  type BreakDurationGeneratorArguments,
  type CircuitAcquireResult,
  type CircuitBreakerKind,
  type CircuitBreakerPredicateArguments,
  type CircuitBreakerStateStore,
  type CircuitBreakerStrategyOptions,
  type CircuitCallResult,
  type CircuitHealth,
  type CircuitMetricsSnapshot,
  type CircuitPermit,
  type CircuitPolicy,
  type CircuitPort,
  type CircuitSnapshot,
  type CircuitState,
  type CircuitTransition,
  type CircuitTransitionReason,
  type CircuitBreakerConfig,
  type MaybePromise,
  type OnCircuitClosedArguments,
  type OnCircuitHalfOpenedArguments,
  type OnCircuitOpenedArguments,
  type OnCircuitStateChangeArguments,
} from './circuit-breaker/index.js';
export type { CircuitOpenedEventArguments, CircuitClosedEventArguments } from './telemetry/resilience-event.model.js';

export {
  getHttpRetryAfter,
  getHttpStatus,
  handleHttpFailure,
  handleRetryableHttpFailure,
  handleTransientHttp,
  HTTP_REQUEST_INFO,
  isTransientHttpStatus,
  parseRetryAfter,
  type HttpRequestInfo,
} from './http/http.predicates.js';
export {
  concurrencyLimiterRegistration,
  concurrencyLimiterStrategy,
  type ConcurrencyLimiterConfig,
  type ConcurrencyLimiterStrategyOptions,
} from './concurrency-limiter/index.js';
export {
  ADAPTIVE_CONCURRENCY_DEFAULTS,
  AdaptiveConcurrencyLimiter,
  adaptiveConcurrencyRegistration,
  adaptiveConcurrencyStrategy,
  type AdaptiveConcurrencyAlgorithm,
  type AdaptiveConcurrencyConfig,
  type AdaptiveConcurrencyOptions,
  type AdaptiveLimitChangedArguments,
  type OnAdaptiveConcurrencyRejectedArguments,
} from './adaptive-concurrency/index.js';
export {
  AdaptiveThrottlingRejectedError,
  AdaptiveThrottlingStateProvider,
  adaptiveThrottlingRegistration,
  adaptiveThrottlingRejectProbability,
  adaptiveThrottlingStrategy,
  DEFAULT_ADAPTIVE_THROTTLING_K,
  DEFAULT_ADAPTIVE_THROTTLING_WINDOW,
  handleOverloadRejection,
  isAdaptiveThrottlingRejectedError,
  isOverloadRejection,
  type AdaptiveThrottlingConfig,
  type AdaptiveThrottlingPort,
  type AdaptiveThrottlingPredicateArguments,
  type AdaptiveThrottlingStatistics,
  type AdaptiveThrottlingStrategyOptions,
  type OnThrottledArguments,
} from './adaptive-throttling/index.js';
export {
  ChainedRateLimiter,
  admittedLease,
  ConcurrencyLimiter,
  createRateLimiter,
  DEFAULT_RATE_LIMIT,
  FixedWindowRateLimiter,
  PartitionedRateLimiter,
  rateLimiterRegistration,
  rateLimiterStrategy,
  rejectedLease,
  SHARED_LIMITER_SERVICE,
  type RateLimiterConfig,
  SlidingWindowRateLimiter,
  TokenBucketRateLimiter,
  type ConcurrencyLimiterOptions,
  type FixedWindowLimiterOptions,
  type InspectableRateLimiter,
  type LimiterSnapshot,
  type OnRateLimiterRejectedArguments,
  type RateLimitDefinition,
  type RateLimiter,
  type RateLimiterStrategyOptions,
  type RateLimitKind,
  type RateLimitLease,
  type SharedLimitSection,
  type SharedLimitSectionName,
  type SlidingWindowLimiterOptions,
  type TokenBucketLimiterOptions,
} from './rate-limiter/index.js';
export {
  DEFAULT_HEDGING_DELAY,
  DEFAULT_MAX_HEDGED_ATTEMPTS,
  hedgingRegistration,
  hedgingStrategy,
  type HedgingConfig,
  type HedgingActionGeneratorArguments,
  type HedgingDelayGeneratorArguments,
  type HedgingPredicateArguments,
  type HedgingStrategyOptions,
  type OnHedgingArguments,
} from './hedging/index.js';
export {
  chaosBehaviorRegistration,
  chaosBehaviorStrategy,
  chaosFaultRegistration,
  chaosFaultStrategy,
  chaosLatencyRegistration,
  chaosLatencyStrategy,
  chaosOutcomeRegistration,
  chaosOutcomeStrategy,
  type ChaosFaultConfig,
  type ChaosLatencyConfig,
  DEFAULT_CHAOS_LATENCY,
  DEFAULT_INJECTION_RATE,
  type ChaosBehaviorOptions,
  type ChaosFaultOptions,
  type ChaosGeneratorArguments,
  type ChaosLatencyOptions,
  type ChaosOutcomeOptions,
  type ChaosStrategyOptions,
} from './chaos/index.js';
