import type { ExecutionContext } from '@nestjs/common';
import { parseDuration } from '../../config/index.js';
import { OptionsValidator, rateLimiterRegistration, type RateLimitDefinition } from '../../core/index.js';
import { NEST_RULES } from '../resilience.messages.js';

/**
 * One per-client limit of the inbound guard, as data: a token bucket, a fixed window or a sliding window
 * (durations in milliseconds, or strings such as `'1m'`). `distributed: true` counts it in Redis (the
 * module option `store: { redis }`), so every instance of the application shares each client's count
 * (token bucket and sliding window).
 *
 * @publicApi
 */
export type ResilienceThrottleLimit =
  | {
      kind: 'token-bucket';
      tokenLimit: number;
      tokensPerPeriod?: number;
      replenishmentPeriod: number | string;
      distributed?: boolean;
    }
  | { kind: 'fixed-window'; permitLimit: number; window: number | string }
  | {
      kind: 'sliding-window';
      permitLimit: number;
      window: number | string;
      segmentsPerWindow?: number;
      distributed?: boolean;
    };

/**
 * The module option `throttle`: per-client limits for `ResilienceThrottleGuard`.
 *
 * @publicApi
 */
export interface ResilienceThrottleOptions {
  /**
   * The limits by name. A guarded route applies the limit named `default`, or the ones its (or its
   * class's) `@ResilienceThrottle(...)` names; each is counted per client across every route that applies it.
   */
  limits: Record<string, ResilienceThrottleLimit>;
  /**
   * The client a request counts for. Default: the request's address (`request.ip`: behind a proxy, set
   * Express's `trust proxy` or Fastify's `trustProxy` so that it is the client's, not the proxy's).
   */
  key?: (request: unknown, context: ExecutionContext) => string | Promise<string>;
  /**
   * Let `critical` requests (`@WithCriticality('critical')` or the criticality header) through without
   * counting them. Default false: criticality does not change a client's limit.
   */
  exemptCritical?: boolean;
  /** Send `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset` with every answer. Default true. */
  headers?: boolean;
}

/** The options of `throttle`. @internal */
export const THROTTLE_OPTION_KEYS = ['limits', 'key', 'exemptCritical', 'headers'];
/** The fields of one limit, of every kind. @internal */
export const THROTTLE_LIMIT_KEYS = [
  'kind',
  'permitLimit',
  'window',
  'segmentsPerWindow',
  'tokenLimit',
  'tokensPerPeriod',
  'replenishmentPeriod',
  'distributed',
];
const KINDS = ['token-bucket', 'fixed-window', 'sliding-window'];
const DURATIONS = ['window', 'replenishmentPeriod'];

/** One limit, ready to build: durations in milliseconds. @internal */
export type NormalizedThrottleLimit = RateLimitDefinition & { distributed?: boolean };

/**
 * Checks the `throttle` option (every problem to `v`, under `throttle`) and returns its limits with
 * durations in milliseconds; `distributed` limits need `hasStore`.
 *
 * @internal
 */
export function normalizeThrottleOptions(
  options: unknown,
  hasStore: boolean,
  v: OptionsValidator,
): Map<string, NormalizedThrottleLimit> {
  const limits = new Map<string, NormalizedThrottleLimit>();
  if (options === undefined) return limits;
  const t = v.child('throttle');
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    t.add('', options, NEST_RULES.throttleObject);
    return limits;
  }
  const o = options as Partial<ResilienceThrottleOptions>;
  t.knownKeys(o, THROTTLE_OPTION_KEYS).func('key', o.key).boolean('exemptCritical', o.exemptCritical);
  t.boolean('headers', o.headers);
  if (typeof o.limits !== 'object' || o.limits === null || Array.isArray(o.limits)) {
    t.add('limits', o.limits, NEST_RULES.throttleObject);
    return limits;
  }
  for (const [name, given] of Object.entries(o.limits)) {
    const l = t.child(`limits.${name}`);
    if (typeof given !== 'object' || given === null) {
      l.add('', given, NEST_RULES.throttleObject);
      continue;
    }
    const limit: Record<string, unknown> = { ...given };
    for (const key of DURATIONS)
      if (typeof limit[key] === 'string') limit[key] = parseDuration(limit[key]) ?? limit[key];
    l.knownKeys(limit, THROTTLE_LIMIT_KEYS).oneOf('kind', limit.kind, KINDS);
    if (!KINDS.includes(limit.kind as string)) {
      l.required('kind', limit.kind);
      continue;
    }
    // The rules of a rate limiter's options (fields per kind, ranges, the kinds that may be distributed),
    // on the known fields only: an unknown one is reported once, above.
    const known = Object.fromEntries(Object.entries(limit).filter(([key]) => THROTTLE_LIMIT_KEYS.includes(key)));
    rateLimiterRegistration.validate?.(l, known, {});
    if (limit.distributed === true && !hasStore) l.add('distributed', true, NEST_RULES.throttleNeedsStore);
    limits.set(name, limit as NormalizedThrottleLimit);
  }
  return limits;
}
