import type { Outcome } from '../outcome/outcome.model.js';
import type {
  ExecutionAttemptEventArguments,
  ResilienceEvent,
  ResilienceEventMap,
  ResilienceEventSeverity,
} from './resilience-event.model.js';

/**
 * One figure of an event, as every reader shows it: a log line as `label=value` (`ms` appended for
 * durations), OpenTelemetry as the attribute `attribute`, the dashboard as the log line does. A fact
 * without `label` is not in log lines; one without `attribute` is not a metric attribute.
 *
 * @publicApi
 */
export interface EventFact {
  /** Its name in log lines and the dashboard (`attempt`). */
  readonly label?: string;
  /** Its OpenTelemetry attribute (`attempt.number`). */
  readonly attribute?: string;
  /** The figure. */
  readonly value: string | number | boolean;
  /** `ms`: a duration in milliseconds (log lines print it rounded, with the unit). */
  readonly unit?: 'ms';
}

/**
 * What the package knows of one telemetry event: how much it matters, how logs show it by default and
 * its figures. The logger, the OpenTelemetry listener, the admin API and the dashboard read events
 * through this, never by name.
 *
 * @publicApi
 */
export interface ResilienceEventDescriptor<A = unknown> {
  /** The severity the event is usually reported with. */
  readonly severity: ResilienceEventSeverity;
  /** How a log shows it unless configured otherwise: a severity, or `false` (left out). Default: `severity`. */
  readonly logAs?: ResilienceEventSeverity | false;
  /** The event's figures, in the order log lines print them. */
  describe?(args: A): readonly EventFact[];
  /** The outcome (or error) the event carries, for log lines and the event stream. Default: `args.outcome`. */
  outcome?(args: A): Outcome<unknown> | undefined;
  /** True for an event that changes what inspection reads (a circuit's state, a limiter). */
  readonly changesState?: boolean;
}

/** The descriptors of a strategy's events, by event name. @publicApi */
export type ResilienceEventDescriptors = {
  readonly [E in ResilienceEvent as E['eventName']]?: ResilienceEventDescriptor<E['arguments']>;
};

/** `ExecutionAttempt`, reported by every strategy that makes attempts (retry, hedging). @publicApi */
export const EXECUTION_ATTEMPT_EVENT: ResilienceEventDescriptor<ExecutionAttemptEventArguments> = {
  severity: 'information',
  logAs: false,
  describe: (a) => [
    { label: 'attempt', value: a.attemptNumber },
    { label: 'handled', value: a.handled },
    { label: 'duration', value: a.duration, unit: 'ms' },
  ],
};

/** The pipeline's own events. */
const PIPELINE_EVENTS: ResilienceEventDescriptors = {
  ExecutionAttempt: EXECUTION_ATTEMPT_EVENT,
  PipelineExecuting: { severity: 'debug', logAs: false },
  PipelineExecuted: {
    severity: 'information',
    logAs: false,
    describe: (a) => [{ label: 'duration', value: a.duration, unit: 'ms' }],
  },
};

const known = new Map<string, ResilienceEventDescriptor>(
  Object.entries(PIPELINE_EVENTS) as [string, ResilienceEventDescriptor][],
);

/**
 * Makes events known to every reader (done by `defineStrategy` for a strategy's events). An event
 * described twice keeps its first description.
 *
 * @publicApi
 */
export function registerResilienceEvents(events: ResilienceEventDescriptors): void {
  for (const [name, descriptor] of Object.entries(events)) {
    if (!known.has(name)) known.set(name, descriptor);
  }
}

/** The descriptor of an event, `undefined` for one nothing registered. @publicApi */
export function resilienceEventDescriptor<K extends keyof ResilienceEventMap>(
  eventName: K,
): ResilienceEventDescriptor<ResilienceEventMap[K]> | undefined;
export function resilienceEventDescriptor(eventName: string): ResilienceEventDescriptor | undefined;
export function resilienceEventDescriptor(eventName: string): ResilienceEventDescriptor | undefined {
  return known.get(eventName);
}

/** The names of every known event, in the order they became known. @publicApi */
export function resilienceEventNames(): readonly (keyof ResilienceEventMap)[] {
  return [...known.keys()] as (keyof ResilienceEventMap)[];
}

/** The figures of an event (none for an unknown one). @publicApi */
export function describeResilienceEvent(eventName: string, args: unknown): readonly EventFact[] {
  return known.get(eventName)?.describe?.(args) ?? [];
}

/** The outcome an event carries, if any. @publicApi */
export function resilienceEventOutcome(eventName: string, args: unknown): Outcome<unknown> | undefined {
  const descriptor = known.get(eventName);
  if (descriptor?.outcome) return descriptor.outcome(args);
  return (args as { outcome?: Outcome<unknown> } | undefined)?.outcome;
}

/** Facts as a log line's tail: `attempt=1 delay=200ms`. @publicApi */
export function formatEventFacts(facts: readonly EventFact[]): string[] {
  const parts: string[] = [];
  for (const fact of facts) {
    if (fact.label === undefined) continue;
    parts.push(`${fact.label}=${fact.unit === 'ms' ? `${Math.round(fact.value as number)}ms` : String(fact.value)}`);
  }
  return parts;
}
