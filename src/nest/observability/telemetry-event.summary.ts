import type { Outcome, ResilienceEvent } from '../../core/index.js';
import { describeOutcome } from '../../core/telemetry/outcome-description.util.js';

/** What the event stream and the dashboard get of an event: names, figures, error types; no payloads. @publicApi */
export interface ResilienceEventSummary {
  /** Wall-clock time, milliseconds since the epoch. */
  readonly time: number;
  readonly eventName: string;
  readonly severity: string;
  readonly pipelineName: string | undefined;
  readonly instanceName: string | undefined;
  readonly strategyName: string | undefined;
  readonly strategyType: string;
  readonly operationKey: string | undefined;
  /** `ok`, or the error's code, status and type (never its message). */
  readonly outcome?: string;
  readonly attemptNumber?: number;
  readonly duration?: number;
  readonly handled?: boolean;
  readonly retryDelay?: number;
  readonly breakDuration?: number;
  readonly reason?: string;
  readonly retryAfter?: number;
  readonly timeout?: number;
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
    outcome: args.outcome ? describeOutcome(args.outcome, false) : undefined,
    attemptNumber: args.attemptNumber,
    duration: args.duration,
    handled: args.handled,
    retryDelay: args.retryDelay,
    breakDuration: args.breakDuration,
    reason: args.reason,
    retryAfter: args.retryAfter,
    timeout: args.timeout,
  };
}
