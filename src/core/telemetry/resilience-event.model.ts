import type { ResilienceContext } from '../context/resilience.context.js';
import type { Outcome } from '../outcome/outcome.model.js';
import type { RateLimiterRejectionReason } from '../resilience.errors.js';

/** How much an event matters; listeners map it to log levels. @publicApi */
export type ResilienceEventSeverity = 'debug' | 'information' | 'warning' | 'error' | 'critical';

/** Who emitted an event: the pipeline and the strategy inside it. @publicApi */
export interface ResilienceTelemetrySource {
  /** The pipeline's name, when it has one. */
  readonly pipelineName: string | undefined;
  /** The pipeline instance's name (a registry key), when it has one. */
  readonly pipelineInstanceName: string | undefined;
  /** The strategy's `name` option, when set. */
  readonly strategyName: string | undefined;
  /** The kind of strategy: `retry`, `timeout`, `fallback`, `circuit-breaker`, … or `pipeline`. */
  readonly strategyType: string;
}

/** Arguments of `ExecutionAttempt`: one attempt of a retry or hedging strategy finished. @publicApi */
export interface ExecutionAttemptEventArguments {
  /** The attempt's outcome. */
  readonly outcome: Outcome<unknown>;
  /** 0 for the original call, 1 for the first retry or hedge, … */
  readonly attemptNumber: number;
  /** How long the attempt took, in milliseconds. */
  readonly duration: number;
  /** Whether the strategy handled the outcome (it will be retried, or was the last attempt and failed). */
  readonly handled: boolean;
}

/** Arguments of `OnRetry`: a handled outcome will be retried after `retryDelay` milliseconds. @publicApi */
export interface RetryEventArguments {
  /** The handled outcome being retried. */
  readonly outcome: Outcome<unknown>;
  /** The attempt that failed (0 for the original call). */
  readonly attemptNumber: number;
  /** How long the strategy waits before the next attempt, in milliseconds. */
  readonly retryDelay: number;
  /** How long the failed attempt took, in milliseconds. */
  readonly duration: number;
}

/** Arguments of `OnRetryGiveUp`: a handled outcome will not be retried. @publicApi */
export interface RetryGiveUpEventArguments {
  /** The last handled outcome, which the pipeline returns or throws. */
  readonly outcome: Outcome<unknown>;
  /** The last attempt (0 for the original call). */
  readonly attemptNumber: number;
  /** Why retrying stopped although the outcome was handled. */
  readonly reason: 'max-attempts' | 'deadline' | 'budget';
}

/** Arguments of `OnTimeout`: a call was cancelled after `timeout` milliseconds. @publicApi */
export interface TimeoutEventArguments {
  /** The timeout that elapsed, in milliseconds. */
  readonly timeout: number;
}

/** Arguments of `OnFallback`: a handled outcome was replaced by the fallback. @publicApi */
export interface FallbackEventArguments {
  /** The handled outcome being replaced. */
  readonly outcome: Outcome<unknown>;
}

/** Arguments of `OnCircuitOpened`: the circuit opened for `breakDuration` milliseconds. @publicApi */
export interface CircuitOpenedEventArguments {
  /** How long the circuit stays open, in milliseconds. */
  readonly breakDuration: number;
  /** Why it opened (a `CircuitTransitionReason`). */
  readonly reason: string;
  /** The failure that opened the circuit, when one did. */
  readonly outcome: Outcome<unknown> | undefined;
  /** The measurements that tripped it: calls measured, failures among them and their ratio. */
  readonly health:
    { readonly throughput: number; readonly failures: number; readonly failureRatio: number } | undefined;
}

/** Arguments of `OnCircuitClosed`: the circuit closed again. @publicApi */
export interface CircuitClosedEventArguments {
  /** Why it closed (a `CircuitTransitionReason`). */
  readonly reason: string;
}

/** Arguments of `PipelineExecuted`: an execution of the whole pipeline finished. @publicApi */
export interface PipelineExecutedEventArguments {
  /** The execution's final outcome. */
  readonly outcome: Outcome<unknown>;
  /** How long the whole execution took, in milliseconds. */
  readonly duration: number;
}

/**
 * The typed payload of every event, by event name. Later strategies add their own entries
 * (circuit-breaker, hedging, rate limiter, chaos) through declaration merging.
 *
 * @publicApi
 */
export interface ResilienceEventMap {
  /** An attempt of a retry or hedging strategy finished. */
  ExecutionAttempt: ExecutionAttemptEventArguments;
  /** A handled outcome will be retried. */
  OnRetry: RetryEventArguments;
  /** A handled outcome will not be retried (attempts, deadline or budget exhausted). */
  OnRetryGiveUp: RetryGiveUpEventArguments;
  /** A timeout cancelled a call. */
  OnTimeout: TimeoutEventArguments;
  /** A fallback replaced a handled outcome. */
  OnFallback: FallbackEventArguments;
  /** A circuit opened. */
  OnCircuitOpened: CircuitOpenedEventArguments;
  /** A circuit closed. */
  OnCircuitClosed: CircuitClosedEventArguments;
  /** A circuit's break elapsed; probes are let through. */
  OnCircuitHalfOpened: Record<string, never>;
  /** A call the circuit did not admit (open, isolated, or half-open with its probes taken). */
  OnCircuitRejected: { readonly state: 'open' | 'half-open' | 'isolated'; readonly retryAfter: number | undefined };
  /**
   * A limiter rejected a call; `retryAfter` estimates the wait in milliseconds, when known; `reason` says
   * whether the limit was full (`limit`) or the call's criticality decided (`shed`).
   */
  OnRateLimiterRejected: { readonly retryAfter: number | undefined; readonly reason?: RateLimiterRejectionReason };
  /** A hedged attempt started. */
  OnHedging: { readonly attemptNumber: number };
  /** A chaos strategy injected a fault, latency, outcome or behaviour. */
  OnChaosInjected: { readonly kind: 'fault' | 'latency' | 'outcome' | 'behavior' };
  /**
   * A shared circuit store stopped answering (circuits follow its outage mode), a store could not
   * record an outcome (the call keeps it), or an adaptive throttling window shared by the fleet could not
   * be synced (the instance decides on its own counts). Once per burst.
   */
  OnStateStoreUnavailable: { readonly error: unknown };
  /** A shared circuit store answers again, or a fleet's adaptive throttling window syncs again. */
  OnStateStoreRestored: { readonly error: unknown };
  /** An execution of the pipeline starts. */
  PipelineExecuting: Record<string, never>;
  /** An execution of the pipeline finished. */
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
 * Receives the events of the pipelines it is given to. `write` must be fast and must not throw; an error
 * it throws is swallowed so telemetry can never break a call.
 *
 * A listener that declares `wants` receives only the events it wants, and the engine does the work of an
 * event (timing attempts, building the event, the pipeline's telemetry path) only when some listener
 * wants it: an event nobody wants costs nothing. A listener without `wants` receives every event.
 *
 * @publicApi
 */
export interface TelemetryListener {
  /** Receives one event; called synchronously by the strategy that emits it. */
  write(event: ResilienceEvent): void;
  /**
   * Optional: whether the listener wants the events named `eventName` reported at `severity`. Asked once
   * per strategy, event and severity, when a pipeline is built or first reports the event — never per
   * event — so the answer must not change over time. Absent: every event is wanted.
   */
  wants?(eventName: keyof ResilienceEventMap, severity: ResilienceEventSeverity): boolean;
  /**
   * Optional: whether the listener reads the `duration` of the events named `eventName` (`ExecutionAttempt`,
   * `OnRetry`, `PipelineExecuted`, …). When no listener that wants an event reads its duration, the engine
   * does not read the clock for it and the event carries `duration: 0`. Asked once, like `wants`. Absent:
   * durations are read.
   */
  wantsDuration?(eventName: keyof ResilienceEventMap): boolean;
}
