import type { ResilienceContext } from '../context/resilience.context.js';
import type { TimeProvider } from '../time/time.provider.js';
import type { OptionsValidator } from '../strategy/options.validation.js';
import { ChainedRateLimiter, PartitionedRateLimiter } from './limiters/composite.limiters.js';
import { ConcurrencyLimiter } from './limiters/concurrency.limiter.js';
import { FixedWindowRateLimiter } from './limiters/fixed-window.limiter.js';
import { SlidingWindowRateLimiter } from './limiters/sliding-window.limiter.js';
import { TokenBucketRateLimiter } from './limiters/token-bucket.limiter.js';
import type { RateLimiter } from './limiters/rate-limiter.model.js';
import { RULES } from '../resilience.messages.js';
import type { RateLimiterRejectionReason } from '../resilience.errors.js';
import { option, optionKeys, type OptionSpec, type OptionsSchema } from '../strategy/options.schema.js';

/** One limit, as data. @publicApi */
export type RateLimitDefinition =
  | {
      kind: 'token-bucket';
      tokenLimit: number;
      tokensPerPeriod?: number;
      replenishmentPeriod: number;
      queueLimit?: number;
    }
  | { kind: 'fixed-window'; permitLimit: number; window: number; queueLimit?: number }
  | { kind: 'sliding-window'; permitLimit: number; window: number; segmentsPerWindow?: number; queueLimit?: number }
  | { kind: 'concurrency'; permitLimit: number; queueLimit?: number; sheddableRatio?: number };

/** The kinds of limit: `concurrency`, `token-bucket`, `fixed-window`, `sliding-window`. @publicApi */
export type RateLimitKind = RateLimitDefinition['kind'];

/** What `onRejected` receives when a call is refused. @publicApi */
export interface OnRateLimiterRejectedArguments {
  /** The context of the rejected call. */
  readonly context: ResilienceContext;
  /** Milliseconds after which a permit may be free, when the limiter can tell. */
  readonly retryAfter: number | undefined;
  /** Why: `limit` (no permit, no room to wait) or `shed` (the call's criticality decided). */
  readonly reason: RateLimiterRejectionReason;
}

/** Options of `addRateLimiter` (and the `rateLimiter` section of a pipeline configuration). @publicApi */
export interface RateLimiterStrategyOptions {
  /** Names the strategy in telemetry and validation messages. */
  name?: string;
  /** The kind of limit, with its fields below; or give `limits` (chained) or a ready `limiter`. */
  kind?: RateLimitKind;
  /** `concurrency`: calls running at once; `fixed-window` and `sliding-window`: calls per window. */
  permitLimit?: number;
  /** `fixed-window` and `sliding-window`: the window, in milliseconds. */
  window?: number;
  /** `sliding-window`: segments the window is measured in. */
  segmentsPerWindow?: number;
  /** `token-bucket`: the bucket's size (the largest burst). */
  tokenLimit?: number;
  /** `token-bucket`: tokens added each `replenishmentPeriod`. */
  tokensPerPeriod?: number;
  /** `token-bucket`: milliseconds between refills. */
  replenishmentPeriod?: number;
  /** Calls that may wait, in FIFO order, for a permit; more are rejected at once. */
  queueLimit?: number;
  /** `concurrency`: the share of `permitLimit` that `sheddable` calls may fill (default 0.8). */
  sheddableRatio?: number;
  /** Several limits that must all admit a call (e.g. per second and per hour). */
  limits?: RateLimitDefinition[];
  /** A limiter of your own (shared between pipelines, distributed…). */
  limiter?: RateLimiter;
  /** One limiter (or chain) per key taken from the context: per user, per tenant, per host. */
  partitionKey?: (context: ResilienceContext) => string;
  /** Runs when a call is rejected, before `RateLimiterRejectedError` is thrown. */
  onRejected?: (args: OnRateLimiterRejectedArguments) => void | PromiseLike<void>;
  /**
   * In a registry with a distributed store (the Nest module with `store: { redis }`): share this limit
   * between every process through Redis (token bucket and sliding window).
   */
  distributed?: boolean;
}

const FIELDS: Record<RateLimitKind, { required: readonly string[]; optional: readonly string[] }> = {
  'token-bucket': { required: ['tokenLimit', 'replenishmentPeriod'], optional: ['tokensPerPeriod', 'queueLimit'] },
  'fixed-window': { required: ['permitLimit', 'window'], optional: ['queueLimit'] },
  'sliding-window': { required: ['permitLimit', 'window'], optional: ['segmentsPerWindow', 'queueLimit'] },
  concurrency: { required: ['permitLimit'], optional: ['queueLimit', 'sheddableRatio'] },
};
/** The fields of a limit, with their rules, in the order they are checked. */
const LIMIT_OPTIONS: Readonly<Record<string, OptionSpec>> = {
  permitLimit: option.number({ min: 1, integer: true }),
  tokenLimit: option.number({ min: 1, integer: true }),
  tokensPerPeriod: option.number({ min: 1, integer: true }),
  queueLimit: option.number({ min: 0, integer: true }, 0),
  segmentsPerWindow: option.number({ min: 1, max: 1_000, integer: true }),
  window: option.duration({ min: 1 }),
  replenishmentPeriod: option.duration({ min: 1 }),
  sheddableRatio: option.number({ min: 0, max: 1 }),
};
const LIMIT_FIELDS = [
  'permitLimit',
  'window',
  'segmentsPerWindow',
  'tokenLimit',
  'tokensPerPeriod',
  'replenishmentPeriod',
  'queueLimit',
  'sheddableRatio',
] as const;

/** A limit field at the top level: checked with the kind it belongs to. */
const byKind = (field: (typeof LIMIT_FIELDS)[number]): OptionSpec => ({
  kind: LIMIT_OPTIONS[field].kind,
  default: LIMIT_OPTIONS[field].default,
});

/** Every option of the rate limiter (the limit fields are checked against the kind). @internal */
export const RATE_LIMITER_OPTIONS: OptionsSchema<RateLimiterStrategyOptions> = {
  name: option.string(),
  kind: option.custom({ kind: 'choice' }),
  permitLimit: byKind('permitLimit'),
  window: byKind('window'),
  segmentsPerWindow: byKind('segmentsPerWindow'),
  tokenLimit: byKind('tokenLimit'),
  tokensPerPeriod: byKind('tokensPerPeriod'),
  replenishmentPeriod: byKind('replenishmentPeriod'),
  queueLimit: byKind('queueLimit'),
  sheddableRatio: byKind('sheddableRatio'),
  limits: option.custom({ kind: 'list', fields: { kind: { kind: 'choice' }, ...LIMIT_OPTIONS } }),
  limiter: option.data(),
  partitionKey: option.func(),
  onRejected: option.func(),
  distributed: option.boolean(false),
};

/** @internal */
export const RATE_LIMITER_OPTION_KEYS = optionKeys(RATE_LIMITER_OPTIONS);

/** Polly's default when nothing is configured: 1,000 concurrent calls, no queue. @publicApi */
export const DEFAULT_RATE_LIMIT: RateLimitDefinition = { kind: 'concurrency', permitLimit: 1_000, queueLimit: 0 };

/** What the schema cannot check: the limit the options describe, by its kind. @internal */
export function checkRateLimiterOptions(v: OptionsValidator, o: RateLimiterStrategyOptions): void {
  if (o.distributed && o.kind !== 'token-bucket' && o.kind !== 'sliding-window') {
    v.add('distributed', o.distributed, RULES.distributedKinds);
  }
  const given = [
    o.kind !== undefined && 'kind',
    o.limits !== undefined && 'limits',
    o.limiter !== undefined && 'limiter',
  ].filter(Boolean);
  if (given.length > 1) v.add(String(given[1]), '(given)', RULES.cannotCombine(String(given[0])));
  if (o.limiter !== undefined && typeof (o.limiter as Partial<RateLimiter>).acquire !== 'function') {
    v.add('limiter', o.limiter, RULES.instanceOf('RateLimiter'));
  }
  if (o.limits !== undefined) {
    if (!Array.isArray(o.limits) || o.limits.length === 0) v.add('limits', o.limits, RULES.nonEmptyArray);
    else o.limits.forEach((limit, i) => validateDefinition(v.child(`limits[${i}]`), limit, true));
  } else if (o.limiter === undefined) {
    if (o.kind === undefined) {
      for (const field of LIMIT_FIELDS)
        if ((o as Record<string, unknown>)[field] !== undefined)
          v.add(field, (o as Record<string, unknown>)[field], RULES.limitNeedsKind);
    } else {
      const { name: _n, limits: _l, limiter: _r, partitionKey: _p, onRejected: _o, distributed: _d, ...definition } = o;
      validateDefinition(v, definition, false);
    }
  }
}

function validateDefinition(v: OptionsValidator, d: Record<string, unknown>, checkKeys: boolean): void {
  const kind = d.kind as RateLimitKind;
  const fields = typeof kind === 'string' && Object.hasOwn(FIELDS, kind) ? FIELDS[kind] : undefined;
  if (!fields) {
    v.oneOf('kind', kind, Object.keys(FIELDS));
    return;
  }
  if (checkKeys) v.knownKeys(d, ['kind', ...fields.required, ...fields.optional]);
  for (const field of fields.required) v.required(field, d[field]);
  for (const field of LIMIT_FIELDS) {
    if (d[field] !== undefined && !fields.required.includes(field) && !fields.optional.includes(field) && !checkKeys) {
      v.add(field, d[field], RULES.limitNotForKind(kind));
    }
  }
  for (const [field, spec] of Object.entries(LIMIT_OPTIONS)) spec.check?.(v, field, d[field]);
}

/** Builds a limiter from a definition. @publicApi */
export function createRateLimiter(definition: RateLimitDefinition, time: TimeProvider): RateLimiter {
  switch (definition.kind) {
    case 'token-bucket':
      return new TokenBucketRateLimiter(definition, time);
    case 'fixed-window':
      return new FixedWindowRateLimiter(definition, time);
    case 'sliding-window':
      return new SlidingWindowRateLimiter(definition, time);
    case 'concurrency':
      return new ConcurrencyLimiter(definition);
  }
}

/** The limiter the options describe (a partitioned one for `partitionKey`). @internal */
export function limiterFromOptions(o: RateLimiterStrategyOptions, time: TimeProvider): RateLimiter {
  const single = (): RateLimiter => {
    if (o.limiter) return o.limiter;
    if (o.limits) {
      const limits = o.limits.map((d) => createRateLimiter(d, time));
      return limits.length === 1 ? limits[0] : new ChainedRateLimiter(limits);
    }
    if (o.kind === undefined) return createRateLimiter(DEFAULT_RATE_LIMIT, time);
    const { name: _n, limits: _l, limiter: _r, partitionKey: _p, onRejected: _o, distributed: _d, ...definition } = o;
    return createRateLimiter(definition as RateLimitDefinition, time);
  };
  if (o.partitionKey && !o.limiter) return new PartitionedRateLimiter(o.partitionKey, () => single());
  return single();
}
