import type { ResilienceContext } from '../context/resilience.context.js';
import type {
  ResilienceEvent,
  ResilienceEventMap,
  ResilienceEventSeverity,
  ResilienceTelemetrySource,
  TelemetryListener,
} from './resilience-event.model.js';

const SEVERITIES: readonly ResilienceEventSeverity[] = ['debug', 'information', 'warning', 'error', 'critical'];
const SEVERITY_INDEX: Readonly<Record<ResilienceEventSeverity, number>> = {
  debug: 0,
  information: 1,
  warning: 2,
  error: 3,
  critical: 4,
};
const NONE: readonly TelemetryListener[] = [];

/** The listeners of one event, by severity (`SEVERITY_INDEX`), and whether any of them wants it at all. */
interface Route {
  readonly bySeverity: readonly (readonly TelemetryListener[])[];
  readonly any: boolean;
  /** Some listener that wants the event reads its `duration`. */
  readonly timed: boolean;
}

/**
 * What one strategy uses to report events. Each listener is asked once per event and severity
 * (`TelemetryListener.wants`, when it has it) which events it wants; strategies ask `wants(eventName)`
 * when they are built and do the work of an event (timing, building its arguments, the pipeline's
 * telemetry path) only when some listener wants it, so an event nobody wants costs nothing.
 *
 * @internal
 */
export class StrategyTelemetry {
  /** True when some listener is attached (whether or not it wants anything). */
  readonly enabled: boolean;
  private readonly routes = new Map<string, Route>();
  private lastEvent: string | undefined;
  private lastRoute: Route | undefined;

  constructor(
    readonly source: ResilienceTelemetrySource,
    private readonly listeners: readonly TelemetryListener[],
  ) {
    this.enabled = listeners.length > 0;
  }

  /**
   * Whether some listener wants `eventName` — at `severity`, or at any severity when none is given.
   * Listeners are asked once per (event, severity); the answer is kept.
   */
  wants(eventName: keyof ResilienceEventMap, severity?: ResilienceEventSeverity): boolean {
    if (!this.enabled) return false;
    const route = this.route(eventName);
    return severity === undefined ? route.any : route.bySeverity[SEVERITY_INDEX[severity]].length > 0;
  }

  /** Whether some listener that wants `eventName` reads its `duration` (the only reason to time it). */
  timesDuration(eventName: keyof ResilienceEventMap): boolean {
    return this.enabled && this.route(eventName).timed;
  }

  report<K extends keyof ResilienceEventMap>(
    eventName: K,
    severity: ResilienceEventSeverity,
    context: ResilienceContext,
    args: ResilienceEventMap[K],
  ): void {
    // Stryker disable next-line ConditionalExpression: equivalent — without listeners the route below has nobody to call; this only skips the lookup
    if (!this.enabled) return;
    const listeners = this.route(eventName).bySeverity[SEVERITY_INDEX[severity]];
    if (listeners.length === 0) return;
    const event = { eventName, severity, source: this.source, context, arguments: args } as ResilienceEvent;
    for (const listener of listeners) {
      try {
        listener.write(event);
      } catch {
        // A listener must never break the call it observes.
      }
    }
  }

  private route(eventName: string): Route {
    // A strategy reports mostly one event per call (a retry's attempts, a pipeline's executions): the last
    // route first, then the map.
    if (eventName === this.lastEvent) return this.lastRoute!;
    let route = this.routes.get(eventName);
    if (route === undefined) {
      const bySeverity = SEVERITIES.map((severity) => {
        const wanting = this.listeners.filter((listener) => listenerWants(listener, eventName, severity));
        return wanting.length === 0 ? NONE : wanting;
      });
      const wanting = new Set(bySeverity.flat());
      const timed = [...wanting].some((listener) => listenerWantsDuration(listener, eventName));
      route = { bySeverity, any: wanting.size > 0, timed };
      this.routes.set(eventName, route);
    }
    this.lastEvent = eventName;
    this.lastRoute = route;
    return route;
  }
}

/** A listener's answer to `wants`; one without `wants`, or whose `wants` throws, wants everything. */
function listenerWants(listener: TelemetryListener, eventName: string, severity: ResilienceEventSeverity): boolean {
  if (typeof listener.wants !== 'function') return true;
  try {
    return listener.wants(eventName as keyof ResilienceEventMap, severity) !== false;
  } catch {
    return true;
  }
}

/** A listener's answer to `wantsDuration`; one without it, or whose `wantsDuration` throws, reads durations. */
function listenerWantsDuration(listener: TelemetryListener, eventName: string): boolean {
  if (typeof listener.wantsDuration !== 'function') return true;
  try {
    return listener.wantsDuration(eventName as keyof ResilienceEventMap) !== false;
  } catch {
    return true;
  }
}
