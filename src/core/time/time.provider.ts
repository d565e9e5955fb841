/** An opaque handle for a timer started through a `TimeProvider`. @publicApi */
export type TimerHandle = unknown;

/**
 * Every strategy reads the clock and waits through one `TimeProvider`, so tests can drive time by hand
 * (see `FakeTimeProvider` in `nest-resilience/testing`). Times are milliseconds since the epoch.
 *
 * @publicApi
 */
export abstract class TimeProvider {
  /** The current time in milliseconds. */
  abstract now(): number;

  /**
   * A monotonic, high-resolution timestamp in milliseconds (fractional), for measuring durations: only the
   * difference of two timestamps means anything (`getElapsedTime`), as .NET's `TimeProvider.GetTimestamp`.
   * Optional: a provider without it measures durations with `now()`. `SystemTimeProvider` uses
   * `performance.now()`; `FakeTimeProvider` moves it with its fake clock.
   */
  getTimestamp?(): number;

  /** Runs `callback` once after `delay` milliseconds. */
  abstract setTimeout(callback: () => void, delay: number): TimerHandle;

  /** Cancels a timer started with `setTimeout`; cancelling a timer that already ran is harmless. */
  abstract clearTimeout(handle: TimerHandle): void;

  /**
   * Waits `delay` milliseconds. Rejects with the signal's reason as soon as the signal aborts; the timer
   * and the abort listener are released either way.
   */
  delay(delay: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    if (delay <= 0) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      let onAbort: (() => void) | undefined;
      const handle = this.setTimeout(() => {
        if (onAbort) signal!.removeEventListener('abort', onAbort);
        resolve();
      }, delay);
      if (signal) {
        onAbort = () => {
          this.clearTimeout(handle);
          reject(abortReason(signal));
        };
        signal.addEventListener('abort', onAbort, { once: true });
      }
    });
  }
}

/**
 * A timestamp of `time` for measuring durations: its `getTimestamp()`, or `now()` for a provider without one.
 *
 * @publicApi
 */
export function getTimestamp(time: TimeProvider): number {
  return time.getTimestamp !== undefined ? time.getTimestamp() : time.now();
}

/**
 * Milliseconds (fractional) between `start` and `end`, two `getTimestamp(time)` values; `end` defaults to
 * a timestamp read now. As .NET's `TimeProvider.GetElapsedTime`.
 *
 * @publicApi
 */
export function getElapsedTime(time: TimeProvider, start: number, end: number = getTimestamp(time)): number {
  return end - start;
}

/** The reason an aborted signal carries, or a standard `AbortError` when it carries none. @publicApi */
export function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}

/** The real clock: `Date.now()`, `performance.now()` for durations, and Node timers. @publicApi */
export class SystemTimeProvider extends TimeProvider {
  now(): number {
    return Date.now();
  }

  override getTimestamp(): number {
    return performance.now();
  }

  setTimeout(callback: () => void, delay: number): TimerHandle {
    return setTimeout(callback, delay);
  }

  clearTimeout(handle: TimerHandle): void {
    clearTimeout(handle as NodeJS.Timeout);
  }
}

/** The shared system clock, used when no time provider is configured. @publicApi */
export const systemTimeProvider: TimeProvider = new SystemTimeProvider();
