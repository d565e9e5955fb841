import { MAX_TIMER_DELAY } from '../strategy/options.validation.js';
import {
  DECORRELATED_JITTER_P_FACTOR,
  DECORRELATED_JITTER_RP_SCALING,
  RETRY_JITTER_FACTOR,
} from './retry.constants.js';
import type { BackoffType } from './retry.options.js';

/** Per-execution state of decorrelated jitter: the previous formula value. @publicApi */
export interface BackoffState {
  /** The previous value of the decorrelated-jitter formula (0 before the first retry). */
  previous: number;
}

/** The options `computeBackoffDelay` needs: backoff type, base delay, jitter and cap. @publicApi */
export interface BackoffOptions {
  /** How the delay grows. */
  readonly backoffType: BackoffType;
  /** The base delay, in milliseconds. */
  readonly delay: number;
  /** Whether to randomise the delay. */
  readonly useJitter: boolean;
  /** The largest delay, in milliseconds. */
  readonly maxDelay?: number;
}

/**
 * The delay before retry number `attempt + 1`, in milliseconds (Polly's `RetryHelper`). Never NaN, never
 * infinite, never negative, never above `maxDelay` nor above the largest timer delay, for any attempt; a
 * base delay of 0 gives 0 for every attempt.
 *
 * @publicApi
 */
export function computeBackoffDelay(
  options: BackoffOptions,
  attempt: number,
  state: BackoffState,
  random: () => number,
): number {
  const { delay, useJitter } = options;
  // As in Polly: no wait to grow (0 × 2^1024 would be NaN, read as the cap).
  if (delay === 0) return 0;
  let result: number;
  switch (options.backoffType) {
    case 'constant':
      result = useJitter ? applyJitter(delay, random) : delay;
      break;
    case 'linear': {
      const linear = (attempt + 1) * delay;
      result = useJitter ? applyJitter(linear, random) : linear;
      break;
    }
    case 'exponential':
      result = useJitter ? decorrelatedJitterV2(attempt, delay, state, random) : delay * Math.pow(2, attempt);
      break;
  }
  return clampDelay(result, options.maxDelay);
}

/** Clamps any computed delay into [0, min(maxDelay, MAX_TIMER_DELAY)]; NaN becomes the cap. @publicApi */
export function clampDelay(delay: number, maxDelay: number | undefined): number {
  const cap = maxDelay === undefined ? MAX_TIMER_DELAY : Math.min(maxDelay, MAX_TIMER_DELAY);
  return Number.isNaN(delay) ? cap : Math.max(0, Math.min(delay, cap));
}

function applyJitter(delay: number, random: () => number): number {
  const offset = (delay * RETRY_JITTER_FACTOR) / 2;
  return delay + (delay * RETRY_JITTER_FACTOR * random() - offset);
}

/**
 * Decorrelated jitter V2 (Polly.Contrib.WaitAndRetry): delays grow exponentially around `2^attempt ×
 * base` but spread evenly, without the clustering of plain random jitter. Past the overflow that sets in
 * near attempt 1024 the formula gives Infinity, then NaN (Infinity − Infinity): `clampDelay` makes both the cap.
 */
function decorrelatedJitterV2(attempt: number, base: number, state: BackoffState, random: () => number): number {
  const t = attempt + random();
  const next = Math.pow(2, t) * Math.tanh(Math.sqrt(DECORRELATED_JITTER_P_FACTOR * t));
  const formulaIntrinsicValue = next - state.previous;
  state.previous = next;
  return formulaIntrinsicValue * DECORRELATED_JITTER_RP_SCALING * base;
}
