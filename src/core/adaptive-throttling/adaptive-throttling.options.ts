import type { ResilienceContext } from '../context/resilience.context.js';
import type { Outcome } from '../outcome/outcome.model.js';
import { AdaptiveThrottlingStateProvider } from './adaptive-throttling.state-provider.js';
import type { AdaptiveThrottlingStore } from './adaptive-throttling.store.js';
import { RULES } from '../resilience.messages.js';
import type { StrategyPipelineInfo } from '../strategy/resilience-strategy.interface.js';
import { option, optionKeys, validateOptions, type OptionsSchema } from '../strategy/options.schema.js';
import type { OptionsValidator } from '../strategy/options.validation.js';

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
 * Shares a strategy's window with the other instances of a fleet: each instance counts in memory, and
 * every `syncInterval` sends its counts to the store and reads the fleet's. Calls never wait for the
 * store; while it cannot be reached, each instance throttles on its own counts.
 *
 * @publicApi
 */
export interface AdaptiveThrottlingFleetOptions {
  /** Where the instances add up their counts: a `RedisAdaptiveThrottlingStore`, or a store of your own. */
  store: AdaptiveThrottlingStore;
  /**
   * Names the shared window: instances giving the same key share it. Default
   * `<pipeline>[:<instance key>]:<name, or adaptive-throttling>` (`defaultAdaptiveThrottlingKey`); required
   * when the pipeline has no name.
   */
  key?: string;
  /**
   * How often this instance sends its counts and reads the fleet's, in ms (at most the window). Default: a
   * tenth of the window, at most 1000.
   */
  syncInterval?: number;
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
  /** Shares the window with the other instances of a fleet, through a store they all reach. Default: this process only. */
  fleet?: AdaptiveThrottlingFleetOptions;
}

/** K of the SRE book. @publicApi */
export const DEFAULT_ADAPTIVE_THROTTLING_K = 2;

/** Two minutes, as the SRE book's window. @publicApi */
export const DEFAULT_ADAPTIVE_THROTTLING_WINDOW = 120_000;

/** A tenth of the window, at most a second: how often a fleet's window is synced unless told. @internal */
export function defaultSyncInterval(window: number): number {
  return Math.min(1_000, window / 10);
}

/** The options of `fleet`. @internal */
export const ADAPTIVE_THROTTLING_FLEET_OPTIONS: OptionsSchema<AdaptiveThrottlingFleetOptions> = {
  store: option.custom({
    kind: 'data',
    check: (v, key, value) => {
      const sync = typeof value === 'object' && value !== null ? (value as { sync?: unknown }).sync : undefined;
      if (value !== undefined && typeof sync !== 'function') {
        v.add(key, value, RULES.instanceOf('AdaptiveThrottlingStore (an object with a sync method)'));
      }
    },
  }),
  key: option.string(),
  syncInterval: option.duration({ min: 1 }),
};

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

/** `fleet`: absent (or `false`), or its options with a store. */
function checkFleet(v: OptionsValidator, key: string, value: unknown): void {
  if (value === undefined || value === false) return;
  if (value === true) {
    v.add(key, value, RULES.fleetNeedsStore);
    return;
  }
  if (!isPlainObject(value)) {
    v.add(key, value, RULES.fleetOptions);
    return;
  }
  validateOptions(v.child(key), ADAPTIVE_THROTTLING_FLEET_OPTIONS, value);
  if (value.store === undefined) v.add(key, value, RULES.fleetNeedsStore);
}

/** The rules between options: a fleet's sync interval within the window, its key where the pipeline has no name. @internal */
export function checkAdaptiveThrottlingOptions(
  v: OptionsValidator,
  o: AdaptiveThrottlingStrategyOptions,
  pipeline: StrategyPipelineInfo,
): void {
  const fleet = o.fleet as unknown;
  if (!isPlainObject(fleet)) return;
  const window = typeof o.window === 'number' ? o.window : DEFAULT_ADAPTIVE_THROTTLING_WINDOW;
  const syncInterval = fleet.syncInterval;
  if (typeof syncInterval === 'number' && syncInterval > window) {
    v.add('fleet.syncInterval', syncInterval, RULES.atMost(`window (${window})`));
  }
  if (fleet.key === undefined && pipeline.name === undefined) v.add('fleet.key', undefined, RULES.fleetKeyRequired);
}

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
  // In configuration `true`, `"true"`, `false` or `{ syncInterval: "500ms", key }` (the store comes from the module).
  fleet: option.custom({ kind: 'boolean', fields: ADAPTIVE_THROTTLING_FLEET_OPTIONS, check: checkFleet }),
};

/** @internal */
export const ADAPTIVE_THROTTLING_FLEET_OPTION_KEYS = optionKeys(ADAPTIVE_THROTTLING_FLEET_OPTIONS);

/** @internal */
export const ADAPTIVE_THROTTLING_OPTION_KEYS = optionKeys(ADAPTIVE_THROTTLING_OPTIONS);
