import { Controller, Module, UseGuards, type DynamicModule, type OnModuleDestroy, type Provider } from '@nestjs/common';
import { OptionsValidator, type TimeProvider } from '../../core/index.js';
import { ResiliencePipelineRegistry } from '../../config/index.js';
import { RESILIENCE_EVENT_STREAM } from '../module/telemetry-listeners.factory.js';
import { RESILIENCE_TIME_PROVIDER } from '../resilience.constants.js';
import { RESILIENCE_STORE_HANDLE, type ResilienceStoreHandle } from '../store/resilience-store.factory.js';
import { ResilienceAdminController } from './resilience-admin.controller.js';
import {
  RESILIENCE_ADMIN_OPTIONS,
  resolveAdminOptions,
  type ResilienceAdminOptions,
} from './resilience-admin.options.js';
import { ResilienceEventStream } from './resilience-event.stream.js';
import { ResilienceFleet } from './resilience-fleet.service.js';

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
 * | `GET /<path>/history` | the circuits' last state changes |
 * | `GET /<path>/fleet` | with `fleet` (and the Redis store): every instance of the fleet |
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
        ...fleetProviders(resolved.fleet, stream),
      ],
      exports: [RESILIENCE_EVENT_STREAM, ResilienceEventStream],
    };
  }
}

/** The fleet view's publisher and reader, when `fleet` is on: it needs the Redis store's channel. */
function fleetProviders(
  fleet: ReturnType<typeof resolveAdminOptions>['fleet'],
  stream: ResilienceEventStream,
): Provider[] {
  if (!fleet) return [];
  return [
    {
      provide: ResilienceFleet,
      inject: [
        ResiliencePipelineRegistry,
        RESILIENCE_TIME_PROVIDER,
        { token: RESILIENCE_STORE_HANDLE, optional: true },
      ],
      useFactory: (registry: ResiliencePipelineRegistry, time: TimeProvider, handle?: ResilienceStoreHandle) => {
        if (!handle?.fleetChannel) {
          new OptionsValidator('admin')
            .add(
              'fleet',
              true,
              'needs ResilienceModule.forRoot({ store: { redis } }): the instances share their stats through Redis',
            )
            .throwIfInvalid('Invalid resilience admin options');
        }
        return new ResilienceFleet(handle!.fleetChannel!(), registry, stream, time, fleet.instanceName, fleet.interval);
      },
    },
  ];
}
