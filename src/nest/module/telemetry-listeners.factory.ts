import type { TelemetryListener } from '../../core/index.js';
import type { ResiliencePipelineRegistry } from '../../config/index.js';
import type { ResilienceModuleOptions } from '../options/resilience-module-options.interface.js';
import { ResilienceLoggerListener } from '../observability/resilience-logger.listener.js';

/** DI token of the admin module's event stream, which `ResilienceModule` adds to its listeners. @internal */
export const RESILIENCE_EVENT_STREAM = Symbol.for('nest-resilience:event-stream');

/**
 * A listener that also reads the registry it serves (e.g. to observe circuit states): `ResilienceModule`
 * calls `attachRegistry` once its registry exists.
 *
 * @publicApi
 */
export interface RegistryAwareTelemetryListener extends TelemetryListener {
  /** Called once by `ResilienceModule` with the registry the listener serves. */
  attachRegistry(registry: ResiliencePipelineRegistry): void;
}

/**
 * The listeners of the module's registry: the user's, the logger (unless `logging: false`) and the admin
 * module's event stream when it is imported. None at all when none is wanted, so telemetry costs nothing.
 *
 * @internal
 */
export function moduleTelemetryListeners(
  options: ResilienceModuleOptions,
  eventStream: TelemetryListener | undefined,
): TelemetryListener[] {
  const listeners = [...(options.telemetryListeners ?? [])];
  if (options.logging !== false) listeners.push(new ResilienceLoggerListener(options.logging));
  if (eventStream) listeners.push(eventStream);
  return listeners;
}

/** Lets every registry-aware listener see the registry. @internal */
export function attachRegistry(listeners: readonly TelemetryListener[], registry: ResiliencePipelineRegistry): void {
  for (const listener of listeners) {
    const aware = listener as Partial<RegistryAwareTelemetryListener>;
    if (typeof aware.attachRegistry === 'function') aware.attachRegistry(registry);
  }
}
