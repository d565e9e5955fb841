import { describe, expect, it } from '@jest/globals';
import {
  BrokenCircuitError,
  CircuitBreakerStateProvider,
  ResiliencePipelineBuilder,
  type CircuitBreakerStrategyOptions,
  type CircuitSnapshot,
} from '../../../src/core.entry.js';
import { FakeTimeProvider } from '../../../src/testing/index.js';
import { deferred, isPending, nextTurn } from '../../utils/flaky.js';

const down = new Error('dependency down');
const fail = (): Promise<string> => Promise.reject(down);
const ok = (): Promise<string> => Promise.resolve('ok');

function breaker(options: CircuitBreakerStrategyOptions<unknown>, time = new FakeTimeProvider()) {
  const provider = new CircuitBreakerStateProvider();
  const pipeline = new ResiliencePipelineBuilder({ name: 'edges', timeProvider: time })
    .addCircuitBreaker({ stateProvider: provider, ...options })
    .build();
  return { pipeline, provider, time };
}

async function settle(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    (v) => v,
    (e: unknown) => e,
  );
}

describe('circuit breaker: behaviours at the edges', () => {
  describe('maxHalfOpenWait', () => {
    it('releases waiting callers when the wait runs out, though the probe never reports', async () => {
      const { pipeline, provider, time } = breaker({
        kind: 'consecutive',
        failureThreshold: 1,
        breakDuration: 100,
        maxHalfOpenWait: 1_000,
        waitForHalfOpenVerdict: true,
      });
      await settle(pipeline.execute(fail));
      time.advance(100);
      const hung = deferred<string>();
      const probe = pipeline.execute(() => hung.promise);
      await nextTurn();
      expect(provider.circuitState).toBe('half-open');
      const waiter = pipeline.execute(ok);
      time.advance(999);
      await nextTurn();
      expect(await isPending(waiter)).toBe(true);
      time.advance(1);
      // The wait is over: the half-open period counts as failed, the circuit opens and the waiter is rejected.
      const error = await settle(waiter);
      expect(error).toBeInstanceOf(BrokenCircuitError);
      expect(provider.circuitState).toBe('open');
      hung.resolve('late');
      await expect(probe).resolves.toBe('late');
    });

    it('does not treat the probe as hung one millisecond before the limit', async () => {
      const { pipeline, provider, time } = breaker({
        kind: 'consecutive',
        failureThreshold: 1,
        breakDuration: 100,
        maxHalfOpenWait: 500,
      });
      await settle(pipeline.execute(fail));
      time.advance(100);
      const hung = deferred<string>();
      void pipeline.execute(() => hung.promise);
      await nextTurn();
      time.advance(499);
      const before = (await settle(pipeline.execute(ok))) as BrokenCircuitError;
      expect(before).toBeInstanceOf(BrokenCircuitError);
      expect(provider.circuitState).toBe('half-open');
      expect(before.message).toContain('half-open');
      time.advance(1);
      const after = (await settle(pipeline.execute(ok))) as BrokenCircuitError;
      expect(after).toBeInstanceOf(BrokenCircuitError);
      expect(provider.circuitState).toBe('open');
      expect(after.retryAfter).toBe(100);
      hung.resolve('late');
    });
  });

  describe('shouldHandle', () => {
    it('awaits an async predicate: a result it calls a failure opens the circuit', async () => {
      const seen: unknown[] = [];
      const { pipeline, provider } = breaker({
        kind: 'consecutive',
        failureThreshold: 2,
        shouldHandle: async ({ outcome }) => {
          await nextTurn();
          seen.push(outcome.ok ? outcome.value : outcome.error);
          return outcome.ok && outcome.value === 'bad';
        },
      });
      await expect(pipeline.execute(async () => 'bad')).resolves.toBe('bad');
      expect(provider.circuitState).toBe('closed');
      await expect(pipeline.execute(async () => 'bad')).resolves.toBe('bad');
      expect(provider.circuitState).toBe('open');
      expect(seen).toEqual(['bad', 'bad']);
    });

    it('an async predicate that says false keeps errors from counting', async () => {
      const { pipeline, provider } = breaker({
        kind: 'consecutive',
        failureThreshold: 1,
        shouldHandle: () => Promise.resolve(false),
      });
      await expect(pipeline.execute(fail)).rejects.toBe(down);
      await expect(pipeline.execute(fail)).rejects.toBe(down);
      expect(provider.circuitState).toBe('closed');
    });
  });

  describe('snapshots', () => {
    it('restores a half-open snapshot from elsewhere as open, probing again at once', async () => {
      const source = breaker({ kind: 'consecutive', failureThreshold: 1, breakDuration: 100 });
      await settle(source.pipeline.execute(fail));
      source.time.advance(100);
      const hung = deferred<string>();
      void source.pipeline.execute(() => hung.promise);
      await nextTurn();
      expect(source.provider.circuitState).toBe('half-open');
      const snapshot = await source.provider.exportSnapshot();
      expect(snapshot.state).toBe('half-open');

      const target = breaker({ kind: 'consecutive', failureThreshold: 1, breakDuration: 100 }, source.time);
      await target.pipeline.execute(ok); // binds the provider
      await target.provider.importSnapshot(snapshot);
      expect(target.provider.circuitState).toBe('open');
      const restored = await target.provider.exportSnapshot();
      expect(restored.state).toBe('open');
      expect(restored.blockedUntil).toBe(snapshot.halfOpenSince);
      // Due now: the next call is a probe, and its success closes the circuit.
      await expect(target.pipeline.execute(ok)).resolves.toBe('ok');
      expect(target.provider.circuitState).toBe('closed');
      hung.resolve('late');
    });

    it('a count window exports its outcomes oldest first after the ring wrapped', async () => {
      const { pipeline, provider } = breaker({
        kind: 'count-window',
        windowSize: 4,
        minimumThroughput: 4,
        failureRatio: 1,
      });
      // 6 calls into a ring of 4: s f s s f f → the window holds the last 4, oldest first: s s f f.
      for (const call of [ok, fail, ok, ok, fail, fail]) await settle(pipeline.execute(call));
      const snapshot = await provider.exportSnapshot();
      expect(snapshot.metrics).toEqual({ kind: 'count-window', outcomes: '0011' });
      expect(provider.circuitState).toBe('closed');

      // Restored elsewhere, the order survives: two more failures make four in a row and open the circuit.
      const other = breaker({ kind: 'count-window', windowSize: 4, minimumThroughput: 4, failureRatio: 1 });
      await other.pipeline.execute(ok);
      await other.provider.importSnapshot(snapshot);
      await settle(other.pipeline.execute(fail));
      expect(other.provider.circuitState).toBe('closed');
      await settle(other.pipeline.execute(fail));
      expect(other.provider.circuitState).toBe('open');
    });

    it('a count window before it wraps exports calls in arrival order', async () => {
      const { pipeline, provider } = breaker({ kind: 'count-window', windowSize: 5, minimumThroughput: 5 });
      for (const call of [fail, ok, fail]) await settle(pipeline.execute(call));
      const snapshot: CircuitSnapshot = await provider.exportSnapshot();
      expect(snapshot.metrics).toEqual({ kind: 'count-window', outcomes: '101' });
    });
  });

  describe('boundaries of the kinds', () => {
    it('consecutive: opens at exactly the threshold, not one before', async () => {
      const { pipeline, provider } = breaker({ kind: 'consecutive', failureThreshold: 3 });
      for (let i = 0; i < 2; i++) await settle(pipeline.execute(fail));
      expect(provider.circuitState).toBe('closed');
      await settle(pipeline.execute(fail));
      expect(provider.circuitState).toBe('open');
    });

    it('count-window: a ratio equal to failureRatio opens; one call short of minimumThroughput does not', async () => {
      const { pipeline, provider } = breaker({
        kind: 'count-window',
        windowSize: 10,
        minimumThroughput: 4,
        failureRatio: 0.5,
      });
      for (const call of [fail, ok, fail]) await settle(pipeline.execute(call));
      expect(provider.circuitState).toBe('closed'); // 2/3 ≥ 0.5 but only 3 calls
      await settle(pipeline.execute(ok));
      expect(provider.circuitState).toBe('closed'); // 4 calls, ratio 0.5, but the last call was a success
      await settle(pipeline.execute(fail));
      expect(provider.circuitState).toBe('open'); // 3/5 ≥ 0.5
    });

    it('count-window: exactly the ratio at exactly the throughput opens', async () => {
      const { pipeline, provider } = breaker({
        kind: 'count-window',
        windowSize: 10,
        minimumThroughput: 4,
        failureRatio: 0.5,
      });
      for (const call of [ok, ok, fail]) await settle(pipeline.execute(call));
      await settle(pipeline.execute(fail)); // 2/4 = 0.5 at 4 calls
      expect(provider.circuitState).toBe('open');
    });

    it('time-window: exactly the ratio at exactly the throughput opens; calls older than the window drop out', async () => {
      const { pipeline, provider, time } = breaker({
        kind: 'time-window',
        samplingDuration: 1_000,
        minimumThroughput: 2,
        failureRatio: 0.5,
      });
      await settle(pipeline.execute(fail));
      time.advance(1_000);
      await settle(pipeline.execute(ok)); // the first failure has left the window: 0/1
      await settle(pipeline.execute(ok)); // 0/2
      expect(provider.circuitState).toBe('closed');
      const fresh = breaker({ kind: 'time-window', samplingDuration: 1_000, minimumThroughput: 2, failureRatio: 0.5 });
      await settle(fresh.pipeline.execute(ok));
      await settle(fresh.pipeline.execute(fail)); // 1/2 = 0.5 at 2 calls
      expect(fresh.provider.circuitState).toBe('open');
    });

    it('slow-call: a call taking exactly slowCallDuration counts as slow; one millisecond less does not', async () => {
      const make = () => breaker({ kind: 'slow-call', slowCallDuration: 100, minimumThroughput: 1, failureRatio: 1 });
      const slow = make();
      const exact = slow.pipeline.execute(() => slow.time.delay(100).then(() => 'done'));
      slow.time.advance(100);
      await expect(exact).resolves.toBe('done');
      expect(slow.provider.circuitState).toBe('open');

      const fast = make();
      const quick = fast.pipeline.execute(() => fast.time.delay(99).then(() => 'done'));
      fast.time.advance(99);
      await expect(quick).resolves.toBe('done');
      expect(fast.provider.circuitState).toBe('closed');
    });

    it('the break lasts exactly breakDuration: rejected one millisecond before, probing at the mark', async () => {
      const { pipeline, provider, time } = breaker({ kind: 'consecutive', failureThreshold: 1, breakDuration: 200 });
      await settle(pipeline.execute(fail));
      time.advance(199);
      const rejected = (await settle(pipeline.execute(ok))) as BrokenCircuitError;
      expect(rejected).toBeInstanceOf(BrokenCircuitError);
      expect(rejected.retryAfter).toBe(1);
      time.advance(1);
      await expect(pipeline.execute(ok)).resolves.toBe('ok');
      expect(provider.circuitState).toBe('closed');
    });

    it('closes after exactly successThresholdInHalfOpen probes succeed', async () => {
      const { pipeline, provider, time } = breaker({
        kind: 'consecutive',
        failureThreshold: 1,
        breakDuration: 10,
        permittedCallsInHalfOpen: 3,
        successThresholdInHalfOpen: 2,
      });
      await settle(pipeline.execute(fail));
      time.advance(10);
      await pipeline.execute(ok);
      expect(provider.circuitState).toBe('half-open');
      await pipeline.execute(ok);
      expect(provider.circuitState).toBe('closed');
    });
  });
});
