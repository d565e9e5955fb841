import type { CanActivate, ModuleMetadata, Type } from '@nestjs/common';
import { OptionsValidator } from '../../core/index.js';
import type { ResilienceEventStreamOptions } from './resilience-event.stream.js';

/** Options of `ResilienceAdminModule.forRoot`: where it is served, its guards and its event stream. @publicApi */
export interface ResilienceAdminOptions {
  /** Where the API is mounted. Default `resilience` (so `GET /resilience/circuits`). */
  path?: string;
  /**
   * The guards that decide who may use the API (your app's own: `AuthGuard('jwt')`, a roles guard, …).
   * Required: without one the module refuses to start, unless `unprotected: true` says the routes are
   * meant to be open (e.g. on an internal port).
   */
  guards?: readonly (Type<CanActivate> | CanActivate)[];
  /** Serve the API without any guard of its own. Default false. */
  unprotected?: boolean;
  /** Allow `POST …/circuits/:name/isolate` and `…/close` (and the dashboard's buttons). Default false. */
  control?: boolean;
  /** Serve the live dashboard at `…/dashboard`. Default false. */
  dashboard?: boolean;
  /** Modules the guards need (their providers are injected into the guards). */
  imports?: ModuleMetadata['imports'];
  /** Buffers and filters of the event stream. */
  events?: ResilienceEventStreamOptions;
  /** Milliseconds between keep-alive comments on the event stream. Default 15 000. */
  heartbeatInterval?: number;
}

/** @internal */
export interface ResolvedAdminOptions {
  readonly path: string;
  readonly control: boolean;
  readonly dashboard: boolean;
  readonly heartbeatInterval: number;
}

/** DI token of the resolved admin options. @internal */
export const RESILIENCE_ADMIN_OPTIONS = Symbol.for('nest-resilience:admin-options');

const KEYS = ['path', 'guards', 'unprotected', 'control', 'dashboard', 'imports', 'events', 'heartbeatInterval'];

/** Validates the options; one `ResilienceValidationError` lists every problem. @internal */
export function resolveAdminOptions(o: ResilienceAdminOptions): ResolvedAdminOptions {
  const v = new OptionsValidator('admin');
  if (typeof o !== 'object' || o === null) {
    v.add('', o, 'must be an object').throwIfInvalid('Invalid resilience admin options');
  }
  v.knownKeys(o, KEYS)
    .string('path', o.path)
    .boolean('unprotected', o.unprotected)
    .boolean('control', o.control)
    .boolean('dashboard', o.dashboard)
    .duration('heartbeatInterval', o.heartbeatInterval, { min: 1 });
  if (o.guards !== undefined && !Array.isArray(o.guards)) v.add('guards', o.guards, 'must be an array of guards');
  const guards = Array.isArray(o.guards) ? o.guards : [];
  guards.forEach((g: unknown, i) => {
    const ok =
      typeof g === 'function' ||
      (typeof g === 'object' && g !== null && typeof (g as Partial<CanActivate>).canActivate === 'function');
    if (!ok) v.add(`guards[${i}]`, g, 'must be a guard class or instance');
  });
  if (guards.length === 0 && o.unprotected !== true) {
    v.add('guards', o.guards, 'must list at least one guard (or set unprotected: true to serve the API without one)');
  }
  const events = o.events;
  if (events !== undefined) {
    if (typeof events !== 'object' || events === null) v.add('events', events, 'must be an object');
    else {
      v.child('events')
        .knownKeys(events, ['bufferSize', 'recentEvents', 'events', 'now'])
        .number('bufferSize', events.bufferSize, { min: 1, integer: true })
        .number('recentEvents', events.recentEvents, { min: 0, integer: true })
        .func('now', events.now);
    }
  }
  v.throwIfInvalid('Invalid resilience admin options');
  return {
    path: (o.path ?? 'resilience').replace(/^\/+|\/+$/g, ''),
    control: o.control ?? false,
    dashboard: o.dashboard ?? false,
    heartbeatInterval: o.heartbeatInterval ?? 15_000,
  };
}
