import type { ResilienceEvent, TelemetryListener } from '../../src/core.entry.js';

/** Collects telemetry events for assertions. */
export class RecordingListener implements TelemetryListener {
  readonly events: ResilienceEvent[] = [];

  write(event: ResilienceEvent): void {
    this.events.push(event);
  }

  names(): string[] {
    return this.events.map((e) => e.eventName);
  }
}
