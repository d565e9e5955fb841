import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Redis } from 'ioredis';
import {
  BrokenCircuitError,
  CircuitBreakerManualControl,
  InMemoryCircuitBreakerStateStore,
  ResiliencePipelineBuilder,
  type BreakDurationGeneratorArguments,
  type CircuitBreakerStateStore,
} from '../../src/index.js';
import { RedisCircuitBreakerStateStore } from '../../src/redis/index.js';
import { FakeTimeProvider } from '../../src/testing/index.js';
import { ready, redisClient, uniquePrefix } from './redis-test.utils.js';

/**
 * `breakDurationGenerator` on the Redis store: the same arguments and the same breaks as in memory, the
 * break kept in Redis so that every instance waits it out.
 */
const SLACK = 5_000;
const down = new Error('down');

describe('breakDurationGenerator with the Redis store', () => {
  let client: Redis;
  beforeAll(async () => {
    client = redisClient();
    await ready(client);
  });
  afterAll(async () => {
    await client.quit();
  });

  function redisStore(keyPrefix: string, time: FakeTimeProvider): RedisCircuitBreakerStateStore {
    return new RedisCircuitBreakerStateStore({ client, keyPrefix, timeProvider: time, operationTimeout: SLACK });
  }

  /** Drives a breaker through openings, failed probes and a recovery; records what a user sees. */
  async function journey(
    store: CircuitBreakerStateStore,
    time: FakeTimeProvider,
    generator: (args: BreakDurationGeneratorArguments) => number,
    other?: CircuitBreakerStateStore,
  ) {
    const seen: {
      args: BreakDurationGeneratorArguments[];
      opened: number[];
      retryAfter: unknown[];
      transitions: unknown[];
    } = { args: [], opened: [], retryAfter: [], transitions: [] };
    const control = new CircuitBreakerManualControl();
    const build = (s: CircuitBreakerStateStore) =>
      new ResiliencePipelineBuilder<string>({ timeProvider: time })
        .addCircuitBreaker({
          kind: 'time-window',
          samplingDuration: 10_000,
          minimumThroughput: 3,
          failureRatio: 0.5,
          breakDuration: 1_000,
          breakDurationGenerator: (args) => {
            seen.args.push(args);
            return generator(args);
          },
          onOpened: ({ breakDuration, reason, health, isManual }) => {
            seen.opened.push(breakDuration);
            seen.transitions.push({ opened: reason, health, isManual });
          },
          onStateChange: ({ from, to, reason }) => void seen.transitions.push({ from, to, reason }),
          maxHalfOpenWait: 60_000,
          manualControl: s === store ? control : undefined,
          stateStore: s,
          circuitKey: 'orders',
        })
        .build();
    const pipeline = build(store);
    const elsewhere = other ? build(other) : undefined;
    const refusal = async () => {
      const error = await pipeline.execute(() => 'ok').catch((e: unknown) => e);
      seen.retryAfter.push(error instanceof BrokenCircuitError ? error.retryAfter : error);
      if (elsewhere) {
        const there = await elsewhere.execute(() => 'ok').catch((e: unknown) => e);
        expect(there).toBeInstanceOf(BrokenCircuitError); // the break is the fleet's, not this instance's
        expect((there as BrokenCircuitError).retryAfter).toBe(seen.retryAfter.at(-1));
      }
    };
    await pipeline.execute(() => 'ok');
    await pipeline.execute(() => Promise.reject(down)).catch(() => undefined);
    await pipeline.execute(() => Promise.reject(down)).catch(() => undefined); // 2 of 3 failed: opens
    await refusal();
    for (let probe = 0; probe < 3; probe++) {
      time.advance(seen.opened.at(-1)!);
      await pipeline.execute(() => Promise.reject(down)).catch(() => undefined); // the probe fails: opens again
      await refusal();
    }
    time.advance(seen.opened.at(-1)!);
    await pipeline.execute(() => 'ok'); // the probe succeeds: closed

    // A probe that never ends: the next call after maxHalfOpenWait opens the circuit again.
    for (let i = 0; i < 3; i++) await pipeline.execute(() => Promise.reject(down)).catch(() => undefined);
    time.advance(seen.opened.at(-1)!);
    let finish: (value: string) => void = () => undefined;
    const hung = pipeline.execute(() => new Promise<string>((resolve) => (finish = resolve)));
    await new Promise((resolve) => setImmediate(resolve));
    time.advance(60_000);
    await refusal();
    finish('late');
    await hung.catch(() => undefined);

    await control.isolate();
    await control.close();
    return seen;
  }

  it('gets the same arguments and sets the same breaks as in memory, counting the failed probes', async () => {
    const backoff = ({ halfOpenAttempts }: BreakDurationGeneratorArguments) => 2_000 * 2 ** halfOpenAttempts;
    const inMemory = await journey(new InMemoryCircuitBreakerStateStore(), new FakeTimeProvider(1_000_000), backoff);
    const keyPrefix = uniquePrefix('generator');
    const time = new FakeTimeProvider(1_000_000);
    const inRedis = await journey(redisStore(keyPrefix, time), time, backoff, redisStore(keyPrefix, time));
    expect(inMemory.args.map((a) => a.halfOpenAttempts)).toEqual([0, 1, 2, 3, 0, 1]);
    // The last opening is the manual isolation: no generated break, open until closed.
    expect(inMemory.opened).toEqual([2_000, 4_000, 8_000, 16_000, 2_000, 4_000, Infinity]);
    expect(inRedis).toEqual(inMemory);
  });

  it('keeps the fixed break when the generator gives no usable duration, and caps a huge one like in memory', async () => {
    // A string is no duration, not even one that reads as a number; 0 is one (no break at all).
    const answers = [Number.NaN, -5, Number.POSITIVE_INFINITY, 'soon', '2500', 0] as unknown as number[];
    const odd = (answers: number[]) => () => answers.shift()!;
    const inMemory = await journey(
      new InMemoryCircuitBreakerStateStore(),
      new FakeTimeProvider(1_000_000),
      odd([...answers]),
    );
    const keyPrefix = uniquePrefix('generator-odd');
    const time = new FakeTimeProvider(1_000_000);
    const inRedis = await journey(redisStore(keyPrefix, time), time, odd([...answers]));
    expect(inMemory.opened).toEqual([1_000, 1_000, 2_147_483_647, 1_000, 1_000, 0, Infinity]);
    expect(inRedis).toEqual(inMemory);
  });
});
