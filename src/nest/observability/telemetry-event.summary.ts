import {
  describeResilienceEvent,
  formatEventFacts,
  resilienceEventDescriptor,
  resilienceEventOutcome,
  type Outcome,
  type ResilienceEvent,
} from '../../core/index.js';
import { describeOutcome } from '../../core/internal.js';

/** What the event stream and the dashboard get of an event: names, figures, error types; no payloads. @publicApi */
export interface ResilienceEventSummary {
  /** Wall-clock time, milliseconds since the epoch. */
  readonly time: number;
  /** The event's name (`OnRetry`, `OnCircuitOpened`, …). */
  readonly eventName: string;
  /** The event's severity. */
  readonly severity: string;
  /** The pipeline's name, when it has one. */
  readonly pipelineName: string | undefined;
  /** The pipeline instance's name (a registry key), when it has one. */
  readonly instanceName: string | undefined;
  /** The strategy's `name` option, when set. */
  readonly strategyName: string | undefined;
  /** The kind of strategy that emitted the event. */
  readonly strategyType: string;
  /** The call's operation key, when it has one. */
  readonly operationKey: string | undefined;
  /** `ok`, or the error's code, status and type (never its message). */
  readonly outcome?: string;
  /** The attempt, for attempt and retry events. */
  readonly attemptNumber?: number;
  /** Milliseconds the attempt or execution took, when the event measures one. */
  readonly duration?: number;
  /** Whether the strategy handled the outcome, for attempt events. */
  readonly handled?: boolean;
  /** Milliseconds before the next attempt, for `OnRetry`. */
  readonly retryDelay?: number;
  /** Milliseconds the circuit stays open, for `OnCircuitOpened`. */
  readonly breakDuration?: number;
  /** Why a circuit changed state or a retry gave up. */
  readonly reason?: string;
  /** Milliseconds until a rejected call may be admitted, when known. */
  readonly retryAfter?: number;
  /** The timeout that elapsed, for `OnTimeout`. */
  readonly timeout?: number;
  /** The event's figures as its descriptor tells them (`attempt=1 delay=200ms`), for any event. */
  readonly details?: string;
  /** True for an event that changes what inspection reads (circuits, limiters). */
  readonly changesState?: boolean;
}

/** @internal */
export function summarizeEvent(event: ResilienceEvent, time: number): ResilienceEventSummary {
  const { source, context } = event;
  const args = event.arguments as Partial<{
    outcome: Outcome<unknown>;
    attemptNumber: number;
    duration: number;
    handled: boolean;
    retryDelay: number;
    breakDuration: number;
    reason: string;
    retryAfter: number;
    timeout: number;
  }>;
  return {
    time,
    eventName: event.eventName,
    severity: event.severity,
    pipelineName: source.pipelineName,
    instanceName: source.pipelineInstanceName,
    strategyName: source.strategyName,
    strategyType: source.strategyType,
    operationKey: context.operationKey,
    outcome: outcomeOf(event, args.outcome),
    attemptNumber: args.attemptNumber,
    duration: args.duration,
    handled: args.handled,
    retryDelay: args.retryDelay,
    breakDuration: args.breakDuration,
    reason: args.reason,
    retryAfter: args.retryAfter,
    timeout: args.timeout,
    details: formatEventFacts(describeResilienceEvent(event.eventName, event.arguments)).join(' ') || undefined,
    changesState: resilienceEventDescriptor(event.eventName)?.changesState,
  };
}

/** The event's outcome (or the error it carries), described without its message. */
function outcomeOf(event: ResilienceEvent, outcome: Outcome<unknown> | undefined): string | undefined {
  const carried = outcome ?? resilienceEventOutcome(event.eventName, event.arguments);
  return carried ? describeOutcome(carried, false) : undefined;
}
