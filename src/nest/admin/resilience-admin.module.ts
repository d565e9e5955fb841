import { Controller, Module, UseGuards, type DynamicModule, type OnModuleDestroy } from '@nestjs/common';
import { RESILIENCE_EVENT_STREAM } from '../observability/telemetry-listeners.factory.js';
import { ResilienceAdminController } from './resilience-admin.controller.js';
import {
  RESILIENCE_ADMIN_OPTIONS,
  resolveAdminOptions,
  type ResilienceAdminOptions,
} from './resilience-admin.options.js';
import { ResilienceEventStream } from './resilience-event.stream.js';

/** Disconnects the event stream's clients when the application shuts down. @internal */
class EventStreamCloser implements OnModuleDestroy {
  constructor(private readonly stream: ResilienceEventStream) {}

  onModuleDestroy(): void {
    this.stream.close();
  }
}

/**
 * The admin API (and, with `dashboard: true`, the live dashboard), opt-in and behind your guards:
 *
 * | route | |
 * | --- | --- |
 * | `GET /<path>/pipelines` | every pipeline with its strategies in order and its (redacted) options |
 * | `GET /<path>/circuits`, `GET /<path>/circuits/:name?key=` | circuits: state, window figures, retry-after |
 * | `GET /<path>/limiters` | permits in use, queue lengths |
 * | `GET /<path>/stats` | calls, failures, rejections, latency percentiles per pipeline (last minute) |
 * | `GET /<path>/events` | server-sent events, one per telemetry event |
 * | `POST /<path>/circuits/:name/isolate`, `…/close` | with `control: true` |
 * | `GET /<path>/dashboard` | with `dashboard: true` |
 *
 * Import it next to `ResilienceModule.forRoot(…)`. Global, so the module's registry streams its events
 * to it.
 *
 * @publicApi
 */
@Module({})
export class ResilienceAdminModule {
  /** Serves the admin API and its event stream at `options.path` (and the dashboard when enabled), behind the given guards. */
  static forRoot(options: ResilienceAdminOptions): DynamicModule {
    const resolved = resolveAdminOptions(options);
    // A controller class per module, so that the path and guards are this configuration's.
    class AdminController extends ResilienceAdminController {}
    Object.defineProperty(AdminController, 'name', { value: 'ResilienceAdminController' });
    Controller(resolved.path)(AdminController);
    if (options.guards?.length) UseGuards(...options.guards)(AdminController);
    const stream = new ResilienceEventStream(options.events);
    return {
      module: ResilienceAdminModule,
      global: true,
      imports: [...(options.imports ?? [])],
      controllers: [AdminController],
      providers: [
        { provide: RESILIENCE_ADMIN_OPTIONS, useValue: resolved },
        { provide: RESILIENCE_EVENT_STREAM, useValue: stream },
        { provide: ResilienceEventStream, useValue: stream },
        { provide: EventStreamCloser, useFactory: () => new EventStreamCloser(stream) },
      ],
      exports: [RESILIENCE_EVENT_STREAM, ResilienceEventStream],
    };
  }
}
