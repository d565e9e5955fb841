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

/** The reason an aborted signal carries, or a standard `AbortError` when it carries none. @publicApi */
export function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}

/** The real clock: `Date.now()` and Node timers. @publicApi */
export class SystemTimeProvider extends TimeProvider {
  now(): number {
    return Date.now();
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
