import type { ResilienceContext } from '../context/resilience.context.js';
import type { RateLimiterRejectionReason } from '../resilience.errors.js';
import { RULES } from '../resilience.messages.js';
import { option, optionKeys, type OptionsSchema } from '../strategy/options.schema.js';
import type { OptionsValidator } from '../strategy/options.validation.js';

/** How the adaptive limit follows latency: `gradient2` (default) or `aimd`. @publicApi */
export type AdaptiveConcurrencyAlgorithm = 'gradient2' | 'aimd';

/** What `onRejected` of the adaptive concurrency limiter receives. @publicApi */
export interface OnAdaptiveConcurrencyRejectedArguments {
  /** The context of the rejected call. */
  readonly context: ResilienceContext;
  /** `limit` (no permit, no room to wait) or `shed` (the call's criticality decided). */
  readonly reason: RateLimiterRejectionReason;
  /** The limit when the call was rejected. */
  readonly limit: number;
}

/** What `onLimitChanged` receives when the adaptive limit moves. @publicApi */
export interface AdaptiveLimitChangedArguments {
  /** The limit before. */
  readonly previousLimit: number;
  /** The limit now. */
  readonly limit: number;
  /** The average round-trip time of the window that moved it, in milliseconds. */
  readonly rtt: number;
  /** Gradient2's long-window baseline RTT, in milliseconds (undefined for AIMD). */
  readonly longRtt: number | undefined;
}

/**
 * Options of `addAdaptiveConcurrencyLimiter` (and the `adaptiveConcurrency` section,
 * `@AdaptiveConcurrencyLimit`). Defaults in `ADAPTIVE_CONCURRENCY_DEFAULTS`.
 *
 * @publicApi
 */
export interface AdaptiveConcurrencyOptions {
  /** Names the strategy in telemetry and validation messages. */
  name?: string;
  /** `gradient2` (latency against its own baseline; default) or `aimd` (drops and a latency threshold). */
  algorithm?: AdaptiveConcurrencyAlgorithm;
  /** The limit to start from. Default 20. */
  initialLimit?: number;
  /** The limit never goes below this. Default 1. */
  minLimit?: number;
  /** The limit never goes above this. Default 200. */
  maxLimit?: number;
  /** Calls that may wait for a permit (critical ones first); more are rejected. Default 0. */
  queueLimit?: number;
  /** The share of the limit that `sheddable` calls may fill (they never wait). Default 0.8. */
  sheddableRatio?: number;
  /** Finished calls per measurement window: the limit moves at most once per window. Default 10. */
  windowSize?: number;
  /** Gradient2: windows the long-term baseline RTT averages over. Default 100. */
  longWindow?: number;
  /** Gradient2: how much of each new estimate is blended into the limit, in (0, 1]. Default 0.2. */
  smoothing?: number;
  /** Gradient2: how far above the baseline the short RTT may rise before the limit shrinks (≥ 1). Default 1.5. */
  tolerance?: number;
  /** Gradient2: how much the limit may grow per window while latency stays at baseline. Default 4. */
  growth?: number;
  /** AIMD: the factor a limit is multiplied by after a drop, in [0.5, 1). Default 0.9. */
  backoffRatio?: number;
  /** AIMD: a window whose average RTT is above this (ms) counts as a drop. Default 5000. */
  slowCallDuration?: number;
  /**
   * Which failures are drops (load the dependency could not take). Default: timeouts
   * (`TimeoutRejectedError`) and limiter rejections from further in (`RateLimiterRejectedError`).
   * Cancelled calls are not measured at all.
   */
  isDropped?: (error: unknown) => boolean;
  /** Runs when a call is rejected, before `RateLimiterRejectedError` is thrown. */
  onRejected?: (args: OnAdaptiveConcurrencyRejectedArguments) => void;
  /** Runs when the limit (rounded down) changes. */
  onLimitChanged?: (args: AdaptiveLimitChangedArguments) => void;
}

/** The defaults of the adaptive concurrency limiter's options. @publicApi */
export const ADAPTIVE_CONCURRENCY_DEFAULTS = Object.freeze({
  algorithm: 'gradient2',
  initialLimit: 20,
  minLimit: 1,
  maxLimit: 200,
  queueLimit: 0,
  sheddableRatio: 0.8,
  windowSize: 10,
  longWindow: 100,
  smoothing: 0.2,
  tolerance: 1.5,
  growth: 4,
  backoffRatio: 0.9,
  slowCallDuration: 5_000,
});

/**
 * Every option of the adaptive concurrency limiter: its rule, how configuration reads a string
 * (`"5s"` for `slowCallDuration`, `"20"` for a limit), its default.
 *
 * @internal
 */
export const ADAPTIVE_CONCURRENCY_OPTIONS: OptionsSchema<AdaptiveConcurrencyOptions> = {
  name: option.string(),
  algorithm: option.oneOf(['gradient2', 'aimd'], ADAPTIVE_CONCURRENCY_DEFAULTS.algorithm),
  initialLimit: option.number({ min: 1, integer: true }, ADAPTIVE_CONCURRENCY_DEFAULTS.initialLimit),
  minLimit: option.number({ min: 1, integer: true }, ADAPTIVE_CONCURRENCY_DEFAULTS.minLimit),
  maxLimit: option.number({ min: 1, integer: true }, ADAPTIVE_CONCURRENCY_DEFAULTS.maxLimit),
  queueLimit: option.number({ min: 0, integer: true }, ADAPTIVE_CONCURRENCY_DEFAULTS.queueLimit),
  sheddableRatio: option.number({ min: 0, max: 1 }, ADAPTIVE_CONCURRENCY_DEFAULTS.sheddableRatio),
  windowSize: option.number({ min: 1, integer: true }, ADAPTIVE_CONCURRENCY_DEFAULTS.windowSize),
  longWindow: option.number({ min: 1, integer: true }, ADAPTIVE_CONCURRENCY_DEFAULTS.longWindow),
  smoothing: option.number({ min: 0, max: 1, exclusiveMin: true }, ADAPTIVE_CONCURRENCY_DEFAULTS.smoothing),
  tolerance: option.number({ min: 1 }, ADAPTIVE_CONCURRENCY_DEFAULTS.tolerance),
  growth: option.number({ min: 0 }, ADAPTIVE_CONCURRENCY_DEFAULTS.growth),
  backoffRatio: option.number({ min: 0.5, max: 0.99 }, ADAPTIVE_CONCURRENCY_DEFAULTS.backoffRatio),
  slowCallDuration: option.duration({ min: 1 }, ADAPTIVE_CONCURRENCY_DEFAULTS.slowCallDuration),
  isDropped: option.func(),
  onRejected: option.func(),
  onLimitChanged: option.func(),
};

/** @internal */
export const ADAPTIVE_CONCURRENCY_OPTION_KEYS = optionKeys(ADAPTIVE_CONCURRENCY_OPTIONS);

/** What the options schema cannot check: the three limits against each other. @internal */
export function checkAdaptiveConcurrencyOptions(v: OptionsValidator, o: AdaptiveConcurrencyOptions): void {
  const { minLimit, maxLimit, initialLimit } = resolveLimits(o);
  if (Number.isInteger(minLimit) && Number.isInteger(maxLimit) && maxLimit < minLimit) {
    v.add('maxLimit', o.maxLimit ?? maxLimit, RULES.atLeast(`minLimit (${minLimit})`));
  }
  if (
    o.initialLimit !== undefined &&
    Number.isInteger(initialLimit) &&
    maxLimit >= minLimit &&
    (initialLimit < minLimit || initialLimit > maxLimit)
  ) {
    v.add('initialLimit', o.initialLimit, RULES.number(`between minLimit (${minLimit}) and maxLimit (${maxLimit})`));
  }
}

/** The three limits with their defaults; an `initialLimit` not given is clamped into the bounds. @internal */
export function resolveLimits(o: AdaptiveConcurrencyOptions): {
  minLimit: number;
  maxLimit: number;
  initialLimit: number;
} {
  const minLimit = o.minLimit ?? ADAPTIVE_CONCURRENCY_DEFAULTS.minLimit;
  const maxLimit = o.maxLimit ?? Math.max(minLimit, ADAPTIVE_CONCURRENCY_DEFAULTS.maxLimit);
  const initialLimit =
    o.initialLimit ?? Math.min(maxLimit, Math.max(minLimit, ADAPTIVE_CONCURRENCY_DEFAULTS.initialLimit));
  return { minLimit, maxLimit, initialLimit };
}
