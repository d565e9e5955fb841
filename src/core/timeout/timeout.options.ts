import type { ResilienceContext } from '../context/resilience.context.js';
import { option, optionKeys, type OptionsSchema } from '../strategy/options.schema.js';

/**
 * `cooperative` (default, Polly's only mode): the callback's `context.signal` aborts at the deadline and
 * the strategy waits for the callback to finish; a callback that ignores the signal keeps its result.
 * `aggressive`: the call is rejected at the deadline whatever the callback does; it goes on in the
 * background with an aborted signal and its late outcome is discarded.
 *
 * @publicApi
 */
export type TimeoutMode = 'cooperative' | 'aggressive';

/** What `timeoutGenerator` receives for each call. @publicApi */
export interface TimeoutGeneratorArguments {
  /** The call's context. */
  readonly context: ResilienceContext;
}

/** What `onTimeout` receives when the timeout cancels a call. @publicApi */
export interface OnTimeoutArguments {
  /** The context of the cancelled call. */
  readonly context: ResilienceContext;
  /** The timeout that elapsed, in milliseconds. */
  readonly timeout: number;
}

/** Options of `addTimeout` (and the `timeout` and `totalTimeout` sections of a pipeline configuration). @publicApi */
export interface TimeoutStrategyOptions {
  /** Names the strategy in telemetry and validation messages. */
  name?: string;
  /** Milliseconds before the call is cancelled. Default 30000. */
  timeout?: number;
  /** Computes the timeout per call; `undefined`, 0 or a negative value runs the call without a timeout. */
  timeoutGenerator?: (args: TimeoutGeneratorArguments) => number | undefined | PromiseLike<number | undefined>;
  /** Default `cooperative`. */
  mode?: TimeoutMode;
  /** Runs when the timeout ends a call, before `TimeoutRejectedError` is returned. */
  onTimeout?: (args: OnTimeoutArguments) => void | PromiseLike<void>;
}

/** Polly's default timeout. @publicApi */
export const DEFAULT_TIMEOUT = 30_000;

/** Every option of the timeout strategy. @internal */
export const TIMEOUT_OPTIONS: OptionsSchema<TimeoutStrategyOptions> = {
  name: option.string(),
  timeout: option.duration({ min: 0, exclusiveMin: true }, DEFAULT_TIMEOUT),
  timeoutGenerator: option.func(),
  mode: option.oneOf(['cooperative', 'aggressive'], 'cooperative'),
  onTimeout: option.func(),
};

/** @internal */
export const TIMEOUT_OPTION_KEYS = optionKeys(TIMEOUT_OPTIONS);
