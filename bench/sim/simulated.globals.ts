import type { TimeProvider } from '../../src/core/index.js';

/** A timer handle as Node's look to libraries that call `unref()` on them. */
class SimulatedTimer {
  handle: unknown;
  constructor(readonly interval: number | undefined) {}
  unref(): this {
    return this;
  }
  ref(): this {
    return this;
  }
  hasRef(): boolean {
    return false;
  }
}

type Globals = Pick<typeof globalThis, 'setTimeout' | 'clearTimeout' | 'setInterval' | 'clearInterval'>;

/**
 * Runs `body` with the global clock (`setTimeout`, `setInterval`, `Date.now`, `performance.now`) and
 * `Math.random` pointed at `time` and `random`, for libraries that take no clock (cockatiel, opossum);
 * restores them afterwards. `setImmediate` stays real: the fake clock yields through it.
 */
export async function withSimulatedGlobals<R>(
  time: TimeProvider,
  random: () => number,
  body: () => Promise<R>,
): Promise<R> {
  const saved: Globals = {
    setTimeout: globalThis.setTimeout,
    clearTimeout: globalThis.clearTimeout,
    setInterval: globalThis.setInterval,
    clearInterval: globalThis.clearInterval,
  };
  const savedNow = Date.now;
  const savedPerformanceNow = Object.getOwnPropertyDescriptor(performance, 'now');
  const savedRandom = Math.random;

  const arm = (timer: SimulatedTimer, callback: () => void, delay: number): void => {
    timer.handle = time.setTimeout(() => {
      if (timer.interval !== undefined) arm(timer, callback, timer.interval);
      callback();
    }, delay);
  };
  const start = (callback: unknown, delay: unknown, interval: boolean, args: unknown[]): SimulatedTimer => {
    const ms = Math.max(interval ? 1 : 0, Number(delay) || 0);
    const timer = new SimulatedTimer(interval ? ms : undefined);
    arm(timer, () => (callback as (...a: unknown[]) => void)(...args), ms);
    return timer;
  };
  const clear = (timer: unknown): void => {
    if (timer instanceof SimulatedTimer) time.clearTimeout(timer.handle);
  };
  const patched = {
    setTimeout: (callback: unknown, delay?: unknown, ...args: unknown[]) => start(callback, delay, false, args),
    setInterval: (callback: unknown, delay?: unknown, ...args: unknown[]) => start(callback, delay, true, args),
    clearTimeout: clear,
    clearInterval: clear,
  };
  Object.assign(globalThis, patched);
  Date.now = () => Math.floor(time.now());
  Object.defineProperty(performance, 'now', { value: () => time.now(), configurable: true, writable: true });
  Math.random = random;
  try {
    return await body();
  } finally {
    Object.assign(globalThis, saved);
    Date.now = savedNow;
    if (savedPerformanceNow) Object.defineProperty(performance, 'now', savedPerformanceNow);
    else delete (performance as { now?: unknown }).now;
    Math.random = savedRandom;
  }
}
