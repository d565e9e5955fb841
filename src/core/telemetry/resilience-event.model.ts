import type { ResilienceContext } from '../context/resilience.context.js';
import type { Outcome } from '../outcome.model.js';

/** How much an event matters; listeners map it to log levels. @publicApi */
export type ResilienceEventSeverity = 'debug' | 'information' | 'warning' | 'error' | 'critical';

/** Who emitted an event: the pipeline and the strategy inside it. @publicApi */
export interface ResilienceTelemetrySource {
  readonly pipelineName: string | undefined;
  readonly pipelineInstanceName: string | undefined;
  /** The strategy's `name` option, when set. */
  readonly strategyName: string | undefined;
  /** The kind of strategy: `retry`, `timeout`, `fallback`, `circuit-breaker`, … or `pipeline`. */
  readonly strategyType: string;
}

/** Arguments of `ExecutionAttempt`: one attempt of a retry or hedging strategy finished. @publicApi */
export interface ExecutionAttemptEventArguments {
  readonly outcome: Outcome<unknown>;
  readonly attemptNumber: number;
  /** How long the attempt took, in milliseconds. */
  readonly duration: number;
  /** Whether the strategy handled the outcome (it will be retried, or was the last attempt and failed). */
  readonly handled: boolean;
}

/** Arguments of `OnRetry`: a handled outcome will be retried after `retryDelay` milliseconds. @publicApi */
export interface RetryEventArguments {
  readonly outcome: Outcome<unknown>;
  readonly attemptNumber: number;
  readonly retryDelay: number;
  readonly duration: number;
}

/** Arguments of `OnRetryGiveUp`: a handled outcome will not be retried. @publicApi */
export interface RetryGiveUpEventArguments {
  readonly outcome: Outcome<unknown>;
  readonly attemptNumber: number;
  /** Why retrying stopped although the outcome was handled. */
  readonly reason: 'max-attempts' | 'deadline' | 'budget';
}

/** Arguments of `OnTimeout`: a call was cancelled after `timeout` milliseconds. @publicApi */
export interface TimeoutEventArguments {
  readonly timeout: number;
}

/** Arguments of `OnFallback`: a handled outcome was replaced by the fallback. @publicApi */
export interface FallbackEventArguments {
  readonly outcome: Outcome<unknown>;
}

/** Arguments of `OnCircuitOpened`: the circuit opened for `breakDuration` milliseconds. @publicApi */
export interface CircuitOpenedEventArguments {
  readonly breakDuration: number;
  readonly reason: string;
  /** The failure that opened the circuit, when one did. */
  readonly outcome: Outcome<unknown> | undefined;
  readonly health:
    { readonly throughput: number; readonly failures: number; readonly failureRatio: number } | undefined;
}

/** Arguments of `OnCircuitClosed`: the circuit closed again. @publicApi */
export interface CircuitClosedEventArguments {
  readonly reason: string;
}

/** Arguments of `PipelineExecuted`: an execution of the whole pipeline finished. @publicApi */
export interface PipelineExecutedEventArguments {
  readonly outcome: Outcome<unknown>;
  readonly duration: number;
}

/**
 * The typed payload of every event, by event name. Later strategies add their own entries
 * (circuit-breaker, hedging, rate limiter, chaos) through declaration merging.
 *
 * @publicApi
 */
export interface ResilienceEventMap {
  ExecutionAttempt: ExecutionAttemptEventArguments;
  OnRetry: RetryEventArguments;
  OnRetryGiveUp: RetryGiveUpEventArguments;
  OnTimeout: TimeoutEventArguments;
  OnFallback: FallbackEventArguments;
  OnCircuitOpened: CircuitOpenedEventArguments;
  OnCircuitClosed: CircuitClosedEventArguments;
  OnCircuitHalfOpened: Record<string, never>;
  /** A call the circuit did not admit (open, isolated, or half-open with its probes taken). */
  OnCircuitRejected: { readonly state: 'open' | 'half-open' | 'isolated'; readonly retryAfter: number | undefined };
  OnRateLimiterRejected: { readonly retryAfter: number | undefined };
  OnHedging: { readonly attemptNumber: number };
  OnChaosInjected: { readonly kind: 'fault' | 'latency' | 'outcome' | 'behavior' };
  OnStateStoreUnavailable: { readonly error: unknown };
  OnStateStoreRestored: { readonly error: unknown };
  PipelineExecuting: Record<string, never>;
  PipelineExecuted: PipelineExecutedEventArguments;
}

/** One telemetry event; narrow on `eventName` to get typed `arguments`. @publicApi */
export type ResilienceEvent = {
  [K in keyof ResilienceEventMap]: {
    readonly eventName: K;
    readonly severity: ResilienceEventSeverity;
    readonly source: ResilienceTelemetrySource;
    readonly context: ResilienceContext;
    readonly arguments: ResilienceEventMap[K];
  };
}[keyof ResilienceEventMap];

/**
 * Receives every event of the pipelines it is given to. `write` must be fast and must not throw; an error
 * it throws is swallowed so telemetry can never break a call.
 *
 * @publicApi
 */
export interface TelemetryListener {
  /** Receives one event; called synchronously by the strategy that emits it. */
  write(event: ResilienceEvent): void;
}
