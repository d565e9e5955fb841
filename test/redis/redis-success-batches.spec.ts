import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Redis } from 'ioredis';
import { toCircuitPolicy } from '../../src/core/circuit-breaker/circuit-breaker.strategy.js';
import { TimeProvider, type CircuitPolicy, type CircuitPermit, type TimerHandle } from '../../src/core.entry.js';
import { RedisCircuitBreakerStateStore } from '../../src/redis/index.js';
import { FakeTimeProvider } from '../../src/testing/index.js';
import { ready, redisClient, uniquePrefix } from './redis-test.utils.js';

/**
 * Closed-path successes wait in the store and ride with the circuit's next script call (or the flush):
 * what each call carries is bounded — one group per distinct millisecond, at most 64 groups, a consecutive
 * circuit only its newest success, a count window at most `windowSize` — and every success still counts
 * in Redis, never earlier than it happened. Observed on the wire (the script's arguments, on a real
 * redis-server) and in the circuit Redis keeps.
 */
const SLACK = 5_000;

describe('Redis circuit store: waiting successes', () => {
  let client: Redis;
  /** The successes each script call carried ("time:count,…"), in call order. */
  let carried: string[];
  let original: (...a: unknown[]) => Promise<unknown>;
  beforeAll(async () => {
    client = redisClient();
    await ready(client);
    new RedisCircuitBreakerStateStore({ client }); // defines the script
    const target = client as unknown as { nestResilienceCircuit: (...a: unknown[]) => Promise<unknown> };
    original = target.nestResilienceCircuit;
    target.nestResilienceCircuit = (...a: unknown[]) => {
      if (typeof a[15] === 'string' && a[15] !== '') carried.push(a[15]);
      return original.apply(client, a);
    };
  });
  afterAll(async () => {
    (client as unknown as { nestResilienceCircuit: unknown }).nestResilienceCircuit = original;
    await client.quit();
  });

  function setUp(policy: CircuitPolicy, time: TimeProvider = new FakeTimeProvider(Date.now())) {
    carried = [];
    const store = new RedisCircuitBreakerStateStore({
      client,
      keyPrefix: uniquePrefix('batches'),
      operationTimeout: SLACK,
      timeProvider: time,
    });
    /** Takes `n` permits first, then records a success for each at the times given. */
    const succeed = async (times: number[]) => {
      const permits: CircuitPermit[] = [];
      for (const _ of times) permits.push((await store.acquire('k', policy, times[0])).permit!);
      carried = [];
      times.forEach((at, i) => expect(store.record('k', policy, permits[i], 'success', at)).toBeUndefined());
      await store.flush();
    };
    const successes = async () => {
      const { metrics } = await store.exportSnapshot('k', policy);
      if (metrics.kind === 'count-window') return metrics.outcomes;
      return metrics.kind === 'consecutive' ? metrics.consecutiveFailures : metrics.windows;
    };
    return { store, succeed, successes };
  }

  const timeWindow = toCircuitPolicy({ kind: 'time-window', samplingDuration: 60_000, minimumThroughput: 1_000 });

  it('groups successes of one millisecond, and counts a success from a clock stepped back at the newest time', async () => {
    const t = Date.now();
    const { succeed, successes } = setUp(timeWindow, new FakeTimeProvider(t + 10));
    await succeed([t, t, t, t + 5, t + 5, t + 3]);
    expect(carried).toEqual([`${t}:3,${t + 5}:3`]);
    const windows = (await successes()) as [number, number, number][];
    expect(windows.reduce((n, [, ok]) => n + ok, 0)).toBe(6);
  });

  it('carries at most 64 distinct times; later successes are counted at the newest time, and none is dropped', async () => {
    const t = Date.now() - 1_000;
    const { succeed, successes } = setUp(timeWindow, new FakeTimeProvider(t + 1_000));
    // More successes than a count window holds by default (100): a time window keeps them all.
    await succeed(Array.from({ length: 150 }, (_, i) => t + i));
    expect(carried).toHaveLength(1);
    const groups = carried[0].split(',');
    expect(groups).toHaveLength(64);
    expect(groups.slice(0, 63)).toEqual(Array.from({ length: 63 }, (_, i) => `${t + i}:1`));
    expect(groups[63]).toBe(`${t + 149}:87`);
    const windows = (await successes()) as [number, number, number][];
    expect(windows.reduce((n, [, ok]) => n + ok, 0)).toBe(150);
  });

  it('a consecutive circuit carries only its newest success', async () => {
    const t = Date.now();
    const policy = toCircuitPolicy({ kind: 'consecutive', failureThreshold: 5 });
    const { store, succeed, successes } = setUp(policy, new FakeTimeProvider(t + 10));
    const { permit } = await store.acquire('k', policy, t);
    await store.record('k', policy, permit!, 'failure', t);
    expect(await successes()).toBe(1);
    await succeed([t + 1, t + 2, t + 3]);
    expect(carried).toEqual([`${t + 3}:3`]);
    expect(await successes()).toBe(0); // the run of failures is over
  });

  it('a count window carries at most windowSize successes', async () => {
    const t = Date.now();
    const policy = toCircuitPolicy({ kind: 'count-window', windowSize: 3, minimumThroughput: 100 });
    const { succeed, successes } = setUp(policy, new FakeTimeProvider(t + 10));
    await succeed([t, t + 1, t + 1, t + 2, t + 3]);
    expect(carried).toEqual([`${t + 1}:1,${t + 2}:1,${t + 3}:1`]);
    expect(await successes()).toBe('000');
    await succeed([t + 4, t + 4, t + 4, t + 4]);
    expect(carried).toEqual([`${t + 4}:3`]);
  });

  it('keeps one flush timer, stopped by flush(), and starts the next with the next waiting success', async () => {
    const time = new FakeTimeProvider(Date.now());
    const { store } = setUp(timeWindow, time);
    const permits = [];
    for (let i = 0; i < 4; i++) permits.push((await store.acquire('k', timeWindow, time.now())).permit!);
    expect(store.record('k', timeWindow, permits[0], 'success', time.now())).toBeUndefined();
    expect(store.record('k', timeWindow, permits[1], 'success', time.now())).toBeUndefined();
    expect(time.pendingTimerCount).toBe(1);
    await store.flush();
    expect(time.pendingTimerCount).toBe(0);
    for (const permit of permits.slice(2)) {
      expect(store.record('k', timeWindow, permit, 'success', time.now())).toBeUndefined();
      expect(time.pendingTimerCount).toBe(1);
      carried = [];
      time.advance(100); // the timer sends it
      for (let i = 0; i < 100 && carried.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
      expect(carried).toEqual([`${time.now() - 100}:1`]);
      expect(time.pendingTimerCount).toBe(0); // and the next success starts the next one
    }
    await store.flush();
  });

  it("stops only its own timer: a clock that gives a fired timer's handle to a new timer keeps that one", async () => {
    const fake = new FakeTimeProvider(Date.now());
    /** Hands out the lowest free number as a handle, as a minimal clock of one's own may. */
    class RecyclingClock extends TimeProvider {
      private readonly timers = new Map<number, TimerHandle>();
      now(): number {
        return fake.now();
      }
      setTimeout(callback: () => void, delay: number): TimerHandle {
        let handle = 1;
        while (this.timers.has(handle)) handle++;
        const slot = handle;
        this.timers.set(
          slot,
          fake.setTimeout(() => {
            this.timers.delete(slot);
            callback();
          }, delay),
        );
        return slot;
      }
      clearTimeout(handle: TimerHandle): void {
        fake.clearTimeout(this.timers.get(handle as number));
        this.timers.delete(handle as number);
      }
    }
    const time = new RecyclingClock();
    const { store } = setUp(timeWindow, time);
    const { permit } = await store.acquire('k', timeWindow, fake.now());
    expect(store.record('k', timeWindow, permit!, 'success', fake.now())).toBeUndefined();
    fake.advance(100); // the flush timer fires: its handle is free again
    let fired = false;
    time.setTimeout(() => (fired = true), 50); // someone else's timer, given the same handle
    await store.flush();
    fake.advance(50);
    expect(fired).toBe(true);
  });

  it('works with a clock whose timers have no handle', async () => {
    const fake = new FakeTimeProvider(Date.now());
    /** Timers that hand out no handle (`undefined`), as a minimal clock of one's own may. */
    class HandlelessClock extends TimeProvider {
      now(): number {
        return fake.now();
      }
      setTimeout(callback: () => void, delay: number): TimerHandle {
        fake.setTimeout(callback, delay);
        return undefined;
      }
      clearTimeout(): void {}
    }
    const time = new HandlelessClock();
    const { store, successes } = setUp(timeWindow, time);
    const { permit } = await store.acquire('k', timeWindow, fake.now());
    expect(store.record('k', timeWindow, permit!, 'success', fake.now())).toBeUndefined();
    await store.flush();
    const windows = (await successes()) as [number, number, number][];
    expect(windows.reduce((n, [, ok]) => n + ok, 0)).toBe(1);
  });
});
