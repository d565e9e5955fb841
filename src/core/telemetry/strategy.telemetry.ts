import type { ResilienceContext } from '../context/resilience.context.js';
import type {
  ResilienceEvent,
  ResilienceEventMap,
  ResilienceEventSeverity,
  ResilienceTelemetrySource,
  TelemetryListener,
} from './resilience-event.model.js';

/**
 * What one strategy uses to report events. `enabled` is false when nobody listens, and strategies check
 * it before they time anything or build an event, so telemetry costs nothing when unused.
 *
 * @internal
 */
export class StrategyTelemetry {
  readonly enabled: boolean;

  constructor(
    readonly source: ResilienceTelemetrySource,
    private readonly listeners: readonly TelemetryListener[],
  ) {
    this.enabled = listeners.length > 0;
  }

  report<K extends keyof ResilienceEventMap>(
    eventName: K,
    severity: ResilienceEventSeverity,
    context: ResilienceContext,
    args: ResilienceEventMap[K],
  ): void {
    // Stryker disable next-line ConditionalExpression: equivalent — without listeners the loop below has nothing to call; this only skips building the event
    if (!this.enabled) return;
    const event = { eventName, severity, source: this.source, context, arguments: args } as ResilienceEvent;
    for (const listener of this.listeners) {
      try {
        listener.write(event);
      } catch {
        // A listener must never break the call it observes.
      }
    }
  }
}
