import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { BrokenCircuitError, ResiliencePipelineRegistry } from '../../src/core.entry.js';
import { FakeRedisStateStore, FakeTimeProvider, waitForCircuitState } from '../../src/testing/index.js';
import { commandArb, configArb, runScenario } from '../contracts/circuit-breaker.contract.js';

describe('FakeRedisStateStore', () => {
  describe('against the reference model (the contract the in-memory and Redis stores pass)', () => {
    for (const kind of ['consecutive', 'time-window', 'count-window', 'slow-call'] as const) {
      it(`agrees with the model for the ${kind} breaker`, async () => {
        const store = new FakeRedisStateStore();
        let run = 0;
        await fc.assert(
          fc.asyncProperty(configArb(kind), fc.array(commandArb, { minLength: 1, maxLength: 40 }), (config, commands) =>
            runScenario(config, commands, () => store, `circuit-${++run}`),
          ),
          { numRuns: 40 },
        );
      });
    }
  });

  it('shares circuits between the applications given the same instance, under the Redis keys', async () => {
    const redis = new FakeRedisStateStore({ keyPrefix: 'orders-api' });
    const time = new FakeTimeProvider();
    const pipelines = { inventory: { circuitBreaker: { kind: 'consecutive' as const, failureThreshold: 2 } } };
    const [one, two] = [1, 2].map(
      () => new ResiliencePipelineRegistry({ pipelines, stateStore: redis, timeProvider: time }),
    );
    const failing = () => Promise.reject(new Error('inventory down'));
    await expect(one.getPipeline('inventory').execute(failing)).rejects.toThrow('inventory down');
    await expect(two.getPipeline('inventory').execute(failing)).rejects.toThrow('inventory down');
    // Two failures, one on each instance, opened the one circuit both use.
    await waitForCircuitState(one, 'inventory', 'open', { timeProvider: time });
    await expect(one.getPipeline('inventory').execute(() => 'ok')).rejects.toBeInstanceOf(BrokenCircuitError);
    expect(redis.keys()).toEqual(['orders-api:cb:{inventory/circuit-breaker}']);
    expect(redis.roundTrips).toBeGreaterThan(0);
    redis.flushAll();
    expect(redis.keys()).toEqual([]);
    expect(await two.getPipeline('inventory').execute(() => 'ok')).toBe('ok');
  });

  it('answers asynchronously, and hands out snapshots as copies', async () => {
    const redis = new FakeRedisStateStore();
    const policy = {
      kind: 'consecutive',
      failureThreshold: 1,
      failureRatio: 0.5,
      minimumThroughput: 10,
      samplingDuration: 30_000,
      windowSize: 100,
      breakDuration: 100,
      permittedCallsInHalfOpen: 1,
      successThresholdInHalfOpen: 1,
      maxHalfOpenWait: 1_000,
    } as const;
    const answer = redis.acquire('k', policy, 0);
    expect(answer).toBeInstanceOf(Promise);
    const { permit } = await answer;
    await redis.record('k', policy, permit!, 'failure', 0);
    const snapshot = await redis.exportSnapshot('k', policy);
    expect(snapshot.state).toBe('open');
    expect(snapshot).not.toBe(await redis.exportSnapshot('k', policy));
    expect(snapshot).toEqual(await redis.exportSnapshot('k', policy));
  });
});
