import type { CircuitState } from '../core/circuit-breaker/circuit-state.model.js';
import type { CircuitInfo, ResiliencePipelineRegistry } from '../config/index.js';
import type { TimeProvider } from '../core/time/time.provider.js';
import { FakeTimeProvider, flushPromises } from './fake-time.provider.js';

/** Bounds of `runWithFakeTime`. @publicApi */
export interface RunWithFakeTimeOptions {
  /** Fake milliseconds the clock may move before giving up. Default 86,400,000 (one day). */
  readonly maxTime?: number;
  /** Timers that may run before giving up (a timer that reschedules itself). Default 10,000. */
  readonly maxTimers?: number;
  /**
   * Real milliseconds to wait, while no timer is pending on the fake clock, for the work to schedule one
   * or settle (real I/O: a socket, a child process). Default 1,000.
   */
  readonly idleTimeout?: number;
}

/**
 * Settles `work` by moving `time` forward: runs the next due timer, lets promise continuations run,
 * and repeats until `work` settles. Resolves to its value or rejects with its error — so a test of
 * retries, breaks and timeouts needs no `advanceAsync(total)` arithmetic and no `setImmediate` tricks.
 * Rejects instead of hanging when the clock would move more than `maxTime`, more than `maxTimers` run,
 * or nothing is scheduled on the fake clock for `idleTimeout` real milliseconds.
 *
 * ```ts
 * const time = new FakeTimeProvider();
 * const pipeline = new ResiliencePipelineBuilder({ timeProvider: time }).addRetry({ delay: 2_000 }).build();
 * await expect(runWithFakeTime(time, pipeline.execute(flaky))).resolves.toBe('ok');
 * ```
 *
 * @publicApi
 */
export async function runWithFakeTime<T>(
  time: FakeTimeProvider,
  work: Promise<T> | (() => Promise<T>),
  options: RunWithFakeTimeOptions = {},
): Promise<T> {
  const { maxTime = 86_400_000, maxTimers = 10_000, idleTimeout = 1_000 } = options;
  const promise = typeof work === 'function' ? work() : work;
  let settled = false;
  const observed = promise.then(
    () => {
      settled = true;
    },
    () => {
      settled = true;
    },
  );
  const start = time.now();
  let timers = 0;
  let idleSince: number | undefined;
  await flushPromises();
  while (!settled) {
    const [next] = time.pendingDelays;
    if (next === undefined) {
      idleSince ??= Date.now();
      if (Date.now() - idleSince >= idleTimeout) {
        throw new Error(
          `runWithFakeTime: the work is still pending and nothing is scheduled on the fake clock (waited ${idleTimeout} ms of real time)`,
        );
      }
      await Promise.race([observed, new Promise((resolve) => setTimeout(resolve, 1))]);
      continue;
    }
    idleSince = undefined;
    if (time.now() + Math.max(0, next) - start > maxTime) {
      throw new Error(`runWithFakeTime: the work is still pending after ${maxTime} ms of fake time`);
    }
    if (++timers > maxTimers) {
      throw new Error(`runWithFakeTime: more than ${maxTimers} timers ran; is a timer rescheduling itself?`);
    }
    await time.advanceAsync(Math.max(0, next));
  }
  return promise;
}

/** Options of `waitForCircuitState`. @publicApi */
export interface WaitForCircuitStateOptions {
  /**
   * The registry's clock. A `FakeTimeProvider` is moved forward by `interval` between reads; any other
   * clock is waited on in real time. (A break ending does not change the stored state: the circuit stays
   * `open`, with `retryAfter` 0, until the next call probes it and it turns `half-open`, then `closed`.)
   */
  readonly timeProvider?: TimeProvider;
  /** The pipeline's instance key, for a keyed pipeline (one circuit per key). */
  readonly key?: string;
  /** Milliseconds (on `timeProvider`'s clock) after which the wait fails. Default 30,000. */
  readonly timeout?: number;
  /** Milliseconds between reads. Default 100. */
  readonly interval?: number;
}

/**
 * Resolves with the circuit of the named pipeline once it is in `state` (read through
 * `registry.circuitState`, so from the state store: on Redis, the fleet's view). Rejects, naming the last
 * state seen, when `timeout` passes first.
 *
 * ```ts
 * await waitForCircuitState(registry, 'payments', 'open', { timeProvider: time });
 * ```
 *
 * @publicApi
 */
export async function waitForCircuitState(
  registry: ResiliencePipelineRegistry,
  name: string,
  state: CircuitState,
  options: WaitForCircuitStateOptions = {},
): Promise<CircuitInfo> {
  const { timeProvider, key, timeout = 30_000, interval = 100 } = options;
  const fake = timeProvider instanceof FakeTimeProvider ? timeProvider : undefined;
  const clock = () => (timeProvider ? timeProvider.now() : Date.now());
  const start = clock();
  for (;;) {
    await flushPromises();
    const circuit = await registry.circuitState(name, key);
    if (circuit?.state === state) return circuit;
    if (clock() - start >= timeout) {
      const seen = circuit ? `it is ${circuit.state}` : 'it has no circuit (no breaker, or never used)';
      throw new Error(`waitForCircuitState: the circuit of "${name}" is not ${state} after ${timeout} ms; ${seen}`);
    }
    if (fake) await fake.advanceAsync(interval);
    else await new Promise((resolve) => setTimeout(resolve, interval));
  }
}
