import type { ResilienceContext } from '../context/resilience.context.js';
import type { Outcome } from '../outcome.model.js';
import { AdaptiveThrottlingStateProvider } from './adaptive-throttling.state-provider.js';
import { RULES } from '../resilience.messages.js';
import { option, optionKeys, type OptionsSchema } from '../strategy/options.schema.js';

/** What `shouldHandle` of adaptive throttling receives for each call's outcome. @publicApi */
export interface AdaptiveThrottlingPredicateArguments<T = unknown> {
  /** The outcome of the call. */
  readonly outcome: Outcome<T>;
  /** The call's context. */
  readonly context: ResilienceContext;
}

/** What `onThrottled` receives when a call is rejected locally. @publicApi */
export interface OnThrottledArguments {
  /** The context of the rejected call. */
  readonly context: ResilienceContext;
  /** The probability the call was rejected with, in [0, 1]. */
  readonly rejectProbability: number;
  /** Requests counted in the window, this one included. */
  readonly requests: number;
  /** Requests the dependency accepted in the window. */
  readonly accepts: number;
}

/**
 * Options of `addAdaptiveThrottling` (and the `adaptiveThrottling` section): client-side throttling as in
 * Google's SRE book ("Handling Overload"). Each call is rejected locally, before it reaches the
 * dependency, with probability `max(0, (requests − k × accepts) / (requests + 1))` over the window.
 *
 * @publicApi
 */
export interface AdaptiveThrottlingStrategyOptions<T = unknown> {
  /** Names the strategy in telemetry and validation messages. */
  name?: string;
  /**
   * K, the multiplier: the dependency may reject up to `(k − 1) / k` of the requests before calls are
   * rejected locally. Lower is more aggressive (1.1 rejects locally at 10 % refusals), higher lets more
   * requests through to a refusing dependency. Must be >= 1. Default 2.
   */
  k?: number;
  /** The sliding window requests and accepts are counted over, in milliseconds. Default 120000 (2 minutes). */
  window?: number;
  /**
   * The highest probability a call is rejected with, in [0, 1]: below 1, some calls always reach the
   * dependency, so recovery is noticed sooner. Default 1 (the formula alone).
   */
  maxRejectProbability?: number;
  /**
   * Which outcomes mean the dependency did **not** accept the request. Default
   * `handleOverloadRejection`: HTTP 429 and 503 (responses and errors), gRPC `RESOURCE_EXHAUSTED` and
   * `UNAVAILABLE` codes, a remote `ResilienceRpcError` with status 429 or 503, and an inner circuit
   * breaker's rejection. Every other outcome, failures and cancellations included, counts as accepted.
   */
  shouldHandle?: (args: AdaptiveThrottlingPredicateArguments<T>) => boolean | PromiseLike<boolean>;
  /** Random source in [0, 1) that decides rejections. Default: the pipeline's. */
  random?: () => number;
  /** Runs when a call is rejected locally, before `AdaptiveThrottlingRejectedError` is returned. */
  onThrottled?: (args: OnThrottledArguments) => void | PromiseLike<void>;
  /** Reads the strategy's figures (requests, accepts, reject probability); give one to exactly one strategy. */
  stateProvider?: AdaptiveThrottlingStateProvider;
}

/** K of the SRE book. @publicApi */
export const DEFAULT_ADAPTIVE_THROTTLING_K = 2;

/** Two minutes, as the SRE book's window. @publicApi */
export const DEFAULT_ADAPTIVE_THROTTLING_WINDOW = 120_000;

/**
 * Every option of adaptive throttling: its rule, how configuration reads a string (`"2m"` for
 * `window`, `"1.5"` for `k`), its default.
 *
 * @internal
 */
export const ADAPTIVE_THROTTLING_OPTIONS: OptionsSchema<AdaptiveThrottlingStrategyOptions> = {
  name: option.string(),
  k: option.number({ min: 1 }, DEFAULT_ADAPTIVE_THROTTLING_K),
  window: option.duration({ min: 10 }, DEFAULT_ADAPTIVE_THROTTLING_WINDOW),
  maxRejectProbability: option.number({ min: 0, max: 1 }, 1),
  shouldHandle: option.func(),
  random: option.func(),
  onThrottled: option.func(),
  stateProvider: option.custom({
    kind: 'data',
    check: (v, key, value) => {
      if (value !== undefined && !(value instanceof AdaptiveThrottlingStateProvider)) {
        v.add(key, value, RULES.instanceOf('AdaptiveThrottlingStateProvider'));
      }
    },
  }),
};

/** @internal */
export const ADAPTIVE_THROTTLING_OPTION_KEYS = optionKeys(ADAPTIVE_THROTTLING_OPTIONS);
