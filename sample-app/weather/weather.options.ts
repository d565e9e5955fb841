/** Tunables of the weather demo; tests override them (e.g. zero delays). */
export interface WeatherOptions {
  /** Retries after the first call. */
  readonly maxRetryAttempts: number;
  /** Base delay of the exponential backoff, in milliseconds. */
  readonly retryDelay: number;
  /** Per-attempt timeout, in milliseconds. */
  readonly attemptTimeout: number;
}

export const WEATHER_OPTIONS = Symbol('WEATHER_OPTIONS');

export const DEFAULT_WEATHER_OPTIONS: WeatherOptions = { maxRetryAttempts: 3, retryDelay: 200, attemptTimeout: 2_000 };
