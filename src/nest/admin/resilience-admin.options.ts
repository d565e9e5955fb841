import type { CanActivate, ModuleMetadata, Type } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { OptionsValidator } from '../../core/index.js';
import type { ResilienceEventStreamOptions } from './resilience-event.stream.js';
import { NEST_RULES } from '../resilience.messages.js';

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
  /**
   * Serve the live dashboard at `…/dashboard`: `true`, or its options (the app's own buttons). Default
   * false.
   */
  dashboard?: boolean | ResilienceDashboardOptions;
  /** Modules the guards need (their providers are injected into the guards). */
  imports?: ModuleMetadata['imports'];
  /** Buffers and filters of the event stream. */
  events?: ResilienceEventStreamOptions;
  /** Milliseconds between keep-alive comments on the event stream. Default 15 000. */
  heartbeatInterval?: number;
  /**
   * The fleet view (needs `ResilienceModule`'s `store: { redis }`): every instance publishes compact
   * stats through the shared Redis and the dashboard shows every instance. `true`, or its options.
   * Default false.
   */
  fleet?: boolean | ResilienceFleetOptions;
}

/** The fleet view's options (`fleet: { … }` instead of `fleet: true`). @publicApi */
export interface ResilienceFleetOptions {
  /** This instance's name in the fleet. Default `<hostname>-<pid>-<4 random hex digits>`. */
  instanceName?: string;
  /** Milliseconds between two publishes of this instance's stats. Default 1 000, at least 100. */
  interval?: number;
}

/** The keys of `fleet: { … }`. @internal */
export const FLEET_OPTION_KEYS = [
  'instanceName',
  'interval',
] as const satisfies readonly (keyof ResilienceFleetOptions)[];

/** The dashboard's options (`dashboard: { … }` instead of `dashboard: true`). @publicApi */
export interface ResilienceDashboardOptions {
  /**
   * Buttons of the app's own, shown above the circuits in one box per `group` (in the order the groups
   * are first named). Each calls a route of the app with the page's credentials and shows the answer.
   */
  actions?: readonly DashboardAction[];
  /**
   * Where a user signs in again (a path on the dashboard's own origin, e.g.
   * `'/auth/login?returnTo=/resilience/dashboard'`). When the admin API refuses the page's calls (401 or
   * 403: the session ended), the dashboard stops and says "signed out", with this link when it is given.
   */
  signInUrl?: string;
}

/** The HTTP methods a dashboard action may use. @publicApi */
export type DashboardActionMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** One button of the dashboard that calls a route of the app (e.g. to switch a fault injector). @publicApi */
export interface DashboardAction {
  /** The box the button is shown in. Default `Actions`. */
  group?: string;
  /** The button's text. */
  label: string;
  /** Default `POST`. */
  method?: DashboardActionMethod;
  /**
   * The route to call: a path on the dashboard's own origin, starting with `/` and including any global
   * prefix (`/upstreams/weather/mode`). Other origins are refused, so the page's credentials never leave
   * the app.
   */
  url: string;
  /** Sent as JSON (`content-type: application/json`); plain data only. Not with `GET`. */
  body?: unknown;
  /**
   * A same-origin `GET` route whose JSON answer is the group's current state: shown in the box, read
   * when the page loads, after each click and with every refresh of the figures. The actions of one group
   * share it (give it on one or on all of them).
   */
  stateUrl?: string;
  /**
   * The button shows as pressed (`aria-pressed="true"`) while the group's state has these top-level
   * values, e.g. `{ mode: 'outage' }`.
   */
  activeWhen?: Readonly<Record<string, string | number | boolean | null>>;
}

/** One box of buttons, as the dashboard renders it. @internal */
export interface ResolvedDashboardGroup {
  readonly name: string;
  readonly stateUrl: string | undefined;
  readonly actions: readonly {
    readonly label: string;
    readonly method: DashboardActionMethod;
    readonly url: string;
    readonly body: string | undefined;
    readonly activeWhen: string | undefined;
  }[];
}

/** @internal */
export interface ResolvedAdminOptions {
  readonly path: string;
  readonly control: boolean;
  readonly dashboard: boolean;
  readonly heartbeatInterval: number;
  readonly actionGroups: readonly ResolvedDashboardGroup[];
  readonly signInUrl: string | undefined;
  /** The fleet view, when enabled. */
  readonly fleet: { readonly instanceName: string; readonly interval: number } | undefined;
}

/** DI token of the resolved admin options. @internal */
export const RESILIENCE_ADMIN_OPTIONS = Symbol.for('nest-resilience:admin-options');

const KEYS = [
  'path',
  'guards',
  'unprotected',
  'control',
  'dashboard',
  'imports',
  'events',
  'heartbeatInterval',
  'fleet',
];

/** Validates the options; one `ResilienceValidationError` lists every problem. @internal */
export function resolveAdminOptions(o: ResilienceAdminOptions): ResolvedAdminOptions {
  const v = new OptionsValidator('admin');
  if (typeof o !== 'object' || o === null) {
    v.add('', o, NEST_RULES.object).throwIfInvalid('Invalid resilience admin options');
  }
  v.knownKeys(o, KEYS)
    .string('path', o.path)
    .boolean('unprotected', o.unprotected)
    .boolean('control', o.control)
    .duration('heartbeatInterval', o.heartbeatInterval, { min: 1 });
  const actionGroups = resolveDashboard(v, o.dashboard);
  const signInUrl = dashboardSignInUrl(v, o.dashboard);
  const fleet = resolveFleet(v, o.fleet);
  if (o.guards !== undefined && !Array.isArray(o.guards)) v.add('guards', o.guards, NEST_RULES.guards);
  const guards = Array.isArray(o.guards) ? o.guards : [];
  guards.forEach((g: unknown, i) => {
    const ok =
      typeof g === 'function' ||
      (typeof g === 'object' && g !== null && typeof (g as Partial<CanActivate>).canActivate === 'function');
    if (!ok) v.add(`guards[${i}]`, g, NEST_RULES.guard);
  });
  if (guards.length === 0 && o.unprotected !== true) {
    v.add('guards', o.guards, NEST_RULES.needsGuard);
  }
  const events = o.events;
  if (events !== undefined) {
    if (typeof events !== 'object' || events === null) v.add('events', events, NEST_RULES.object);
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
    dashboard: o.dashboard !== undefined && o.dashboard !== false,
    heartbeatInterval: o.heartbeatInterval ?? 15_000,
    actionGroups,
    signInUrl,
    fleet,
  };
}

function resolveFleet(v: OptionsValidator, fleet: unknown): ResolvedAdminOptions['fleet'] {
  if (fleet === undefined || fleet === false) return undefined;
  if (fleet !== true && (typeof fleet !== 'object' || fleet === null || Array.isArray(fleet))) {
    v.add('fleet', fleet, 'must be a boolean or the fleet options ({ instanceName, interval })');
    return undefined;
  }
  const o: ResilienceFleetOptions = fleet === true ? {} : fleet;
  const f = v.child('fleet');
  f.knownKeys(o, FLEET_OPTION_KEYS).duration('interval', o.interval, { min: 100 });
  if (o.instanceName !== undefined && (typeof o.instanceName !== 'string' || o.instanceName.trim() === '')) {
    f.add('instanceName', o.instanceName, 'must be a non-empty string');
  }
  return {
    instanceName: o.instanceName ?? `${hostname()}-${process.pid}-${randomBytes(2).toString('hex')}`,
    interval: o.interval ?? 1_000,
  };
}

const METHODS: readonly DashboardActionMethod[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];
const ACTION_KEYS = ['group', 'label', 'method', 'url', 'body', 'stateUrl', 'activeWhen'];
const DEFAULT_GROUP = 'Actions';
/** A path on the same origin: one leading slash (not `//host` or `/\\host`), no backslash or whitespace. */
const SAME_ORIGIN_PATH = /^\/(?![/\\])[^\s\\]*$/;
const SAME_ORIGIN_RULE = NEST_RULES.sameOriginPath;

function dashboardSignInUrl(v: OptionsValidator, dashboard: unknown): string | undefined {
  if (typeof dashboard !== 'object' || dashboard === null) return undefined;
  const url = (dashboard as ResilienceDashboardOptions).signInUrl;
  if (url === undefined) return undefined;
  if (typeof url !== 'string' || !SAME_ORIGIN_PATH.test(url)) {
    v.child('dashboard').add('signInUrl', url, SAME_ORIGIN_RULE);
    return undefined;
  }
  return url;
}

function resolveDashboard(v: OptionsValidator, dashboard: unknown): ResolvedDashboardGroup[] {
  if (dashboard === undefined || typeof dashboard === 'boolean') return [];
  if (typeof dashboard !== 'object' || dashboard === null || Array.isArray(dashboard)) {
    v.add('dashboard', dashboard, NEST_RULES.dashboardOption);
    return [];
  }
  const d = v.child('dashboard');
  d.knownKeys(dashboard, ['actions', 'signInUrl']);
  const actions = (dashboard as ResilienceDashboardOptions).actions;
  if (actions === undefined) return [];
  if (!Array.isArray(actions)) {
    d.add('actions', actions, NEST_RULES.actions);
    return [];
  }
  const groups = new Map<
    string,
    { name: string; stateUrl?: string; actions: ResolvedDashboardGroup['actions'][number][] }
  >();
  (actions as unknown[]).forEach((raw, i) => {
    const a = d.child(`actions[${i}]`);
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
      d.add(`actions[${i}]`, raw, NEST_RULES.action);
      return;
    }
    const action = raw as DashboardAction;
    const before = v.problems.length;
    a.knownKeys(action, ACTION_KEYS).string('group', action.group).oneOf('method', action.method, METHODS);
    if (a.required('label', action.label)) a.string('label', action.label);
    if (a.required('url', action.url)) sameOriginPath(a, 'url', action.url);
    if (action.stateUrl !== undefined) sameOriginPath(a, 'stateUrl', action.stateUrl);
    const method = action.method ?? 'POST';
    if (action.body !== undefined) {
      if (method === 'GET') a.add('body', action.body, NEST_RULES.notWithGet);
      else if (!isJsonData(action.body, 0)) {
        a.add('body', action.body, NEST_RULES.plainJson);
      }
    }
    if (action.activeWhen !== undefined) {
      const ok =
        typeof action.activeWhen === 'object' &&
        action.activeWhen !== null &&
        !Array.isArray(action.activeWhen) &&
        Object.values(action.activeWhen).every((x) => x === null || ['string', 'number', 'boolean'].includes(typeof x));
      if (!ok) a.add('activeWhen', action.activeWhen, NEST_RULES.scalarObject);
    }
    const name = typeof action.group === 'string' && action.group !== '' ? action.group : DEFAULT_GROUP;
    const group = groups.get(name) ?? { name, actions: [] };
    if (action.stateUrl !== undefined) {
      if (group.stateUrl !== undefined && group.stateUrl !== action.stateUrl) {
        a.add(
          'stateUrl',
          action.stateUrl,
          `must be the stateUrl of the other actions of group "${name}" (${group.stateUrl})`,
        );
      }
      group.stateUrl ??= action.stateUrl;
    }
    if (v.problems.length > before) return;
    groups.set(name, group);
    group.actions.push({
      label: action.label,
      method,
      url: action.url,
      body: action.body === undefined ? undefined : JSON.stringify(action.body),
      activeWhen: action.activeWhen === undefined ? undefined : JSON.stringify(action.activeWhen),
    });
  });
  return [...groups.values()].map((g) => ({ name: g.name, stateUrl: g.stateUrl, actions: g.actions }));
}

function sameOriginPath(v: OptionsValidator, path: string, value: unknown): void {
  const ok =
    typeof value === 'string' &&
    SAME_ORIGIN_PATH.test(value) &&
    ![...value].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f);
  if (!ok) v.add(path, value, SAME_ORIGIN_RULE);
}

function isJsonData(value: unknown, depth: number): boolean {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return true;
  if (typeof value === 'number') return Number.isFinite(value);
  if (typeof value !== 'object' || depth > 20) return false;
  if (Array.isArray(value)) return value.every((x) => isJsonData(x, depth + 1));
  const proto = Object.getPrototypeOf(value) as object | null;
  if (proto !== Object.prototype && proto !== null) return false;
  return Object.values(value).every((x) => isJsonData(x, depth + 1));
}
