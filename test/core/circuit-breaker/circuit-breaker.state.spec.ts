import { describe, expect, it } from '@jest/globals';
import {
  CircuitBreakerManualControl,
  CircuitBreakerStateProvider,
  InMemoryCircuitBreakerStateStore,
  MAX_TIMER_DELAY,
  ResiliencePipelineBuilder,
  type CircuitBreakerStrategyOptions,
  type CircuitSnapshot,
  type OnCircuitOpenedArguments,
} from '../../../src/core.entry.js';
import { FakeTimeProvider } from '../../../src/testing/index.js';
import { deferred, nextTurn, settle } from '../../utils/flaky.js';

const down = new Error('dependency down');
const fail = (): Promise<string> => Promise.reject(down);
const ok = (): Promise<string> => Promise.resolve('ok');

function breaker(options: CircuitBreakerStrategyOptions<unknown>, time = new FakeTimeProvider()) {
  const provider = new CircuitBreakerStateProvider();
  const pipeline = new ResiliencePipelineBuilder({ name: 'state', timeProvider: time })
    .addCircuitBreaker({ stateProvider: provider, ...options })
    .build();
  return { pipeline, provider, time };
}

describe('circuit breaker: the state it keeps', () => {
  it('exports every field of its state, as it changes through a whole cycle', async () => {
    const time = new FakeTimeProvider(1_000);
    const { pipeline, provider } = breaker({ kind: 'consecutive', failureThreshold: 2, breakDuration: 300 }, time);
    expect(await provider.exportSnapshot()).toEqual({
      version: 1,
      state: 'closed',
      generation: 0,
      blockedUntil: 0,
      lastBreakDuration: 0,
      halfOpenSince: 0,
      halfOpenAttempts: 0,
      probesIssued: 0,
      probesSucceeded: 0,
      lastTransitionAt: 0,
      metrics: { kind: 'consecutive', consecutiveFailures: 0 },
    });
    await settle(pipeline.execute(fail));
    time.advance(10);
    await settle(pipeline.execute(fail));
    expect(await provider.exportSnapshot()).toEqual({
      version: 1,
      state: 'open',
      generation: 1,
      blockedUntil: 1_310,
      lastBreakDuration: 300,
      halfOpenSince: 0,
      halfOpenAttempts: 0,
      probesIssued: 0,
      probesSucceeded: 0,
      lastTransitionAt: 1_010,
      metrics: { kind: 'consecutive', consecutiveFailures: 2 },
    });
    time.advance(300);
    const probe = deferred<string>();
    const probing = pipeline.execute(() => probe.promise);
    await nextTurn();
    expect(await provider.exportSnapshot()).toMatchObject({
      state: 'half-open',
      generation: 2,
      halfOpenSince: 1_310,
      probesIssued: 1,
      probesSucceeded: 0,
      lastTransitionAt: 1_310,
    });
    time.advance(5);
    probe.resolve('ok');
    await probing;
    expect(await provider.exportSnapshot()).toEqual({
      version: 1,
      state: 'closed',
      generation: 3,
      blockedUntil: 1_310,
      lastBreakDuration: 300,
      halfOpenSince: 1_310,
      halfOpenAttempts: 0,
      probesIssued: 0,
      probesSucceeded: 0,
      lastTransitionAt: 1_315,
      metrics: { kind: 'consecutive', consecutiveFailures: 0 },
    });
  });

  it('counts half-open periods that end by opening again, and starts over once it closes', async () => {
    const attempts: number[] = [];
    const { pipeline, provider, time } = breaker({
      kind: 'consecutive',
      failureThreshold: 1,
      breakDurationGenerator: ({ halfOpenAttempts }) => {
        attempts.push(halfOpenAttempts);
        return 100;
      },
    });
    await settle(pipeline.execute(fail)); // opens: 0
    time.advance(100);
    await settle(pipeline.execute(fail)); // failed probe: 1
    time.advance(100);
    await settle(pipeline.execute(fail)); // failed probe: 2
    expect((await provider.exportSnapshot()).halfOpenAttempts).toBe(2);
    time.advance(100);
    await pipeline.execute(ok); // closes
    expect((await provider.exportSnapshot()).halfOpenAttempts).toBe(0);
    await settle(pipeline.execute(fail)); // opens from closed: 0
    expect(attempts).toEqual([0, 1, 2, 0]);
  });

  describe('breakDurationGenerator', () => {
    it.each<[string, unknown, number]>([
      ['a negative number', -1, 250],
      ['not a number', 'soon', 250],
      ['a numeric string', '50', 250],
      ['null', null, 250],
      ['NaN', NaN, 250],
      ['more than the largest timer delay', MAX_TIMER_DELAY * 10, MAX_TIMER_DELAY],
      ['zero', 0, 0],
    ])('answering %s (%p) gives a break of %d', async (_what, generated, expected) => {
      const opened: OnCircuitOpenedArguments<unknown>[] = [];
      const { pipeline, provider } = breaker({
        kind: 'consecutive',
        failureThreshold: 1,
        breakDuration: 250,
        breakDurationGenerator: () => generated as number,
        onOpened: (a) => void opened.push(a),
      });
      await settle(pipeline.execute(fail));
      expect(opened.map((a) => a.breakDuration)).toEqual([expected]);
      expect((await provider.exportSnapshot()).lastBreakDuration).toBe(expected);
    });

    it('a zero-length break probes at once; callers beyond the probe are told to retry after 1 ms', async () => {
      const { pipeline, provider } = breaker({
        kind: 'consecutive',
        failureThreshold: 1,
        breakDurationGenerator: () => 0,
      });
      await settle(pipeline.execute(fail));
      const probe = deferred<string>();
      const probing = pipeline.execute(() => probe.promise);
      await nextTurn();
      expect(provider.circuitState).toBe('half-open');
      expect(await settle(pipeline.execute(ok))).toMatchObject({ retryAfter: 1 });
      probe.resolve('ok');
      await probing;
    });

    it('receives the failure count and ratio the circuit measured', async () => {
      const seen: unknown[] = [];
      const { pipeline } = breaker({
        kind: 'count-window',
        windowSize: 4,
        minimumThroughput: 4,
        failureRatio: 0.5,
        breakDurationGenerator: ({ failureCount, failureRatio }) => {
          seen.push([failureCount, failureRatio]);
          return 100;
        },
      });
      for (const call of [ok, fail, ok, fail]) await settle(pipeline.execute(call));
      expect(seen).toEqual([[2, 0.5]]);
    });
  });

  describe('outcomes of an earlier period', () => {
    it('a call admitted before the circuit opened does not count when it fails afterwards', async () => {
      const opened: string[] = [];
      const { pipeline, time } = breaker({
        kind: 'consecutive',
        failureThreshold: 1,
        breakDuration: 1_000,
        onOpened: ({ reason }) => void opened.push(reason),
      });
      const late = deferred<string>();
      const slow = settle(pipeline.execute(() => late.promise));
      await settle(pipeline.execute(fail)); // opens
      time.advance(600);
      late.reject(new Error('late failure'));
      await slow;
      // Not counted: no second opening, the break is not restarted.
      expect(opened).toEqual(['failure-threshold']);
      expect(await settle(pipeline.execute(ok))).toMatchObject({ retryAfter: 400 });
    });

    it('a manual close on a closed circuit still forgets its measurements', async () => {
      const control = new CircuitBreakerManualControl();
      const { pipeline, provider } = breaker({ kind: 'consecutive', failureThreshold: 2, manualControl: control });
      await settle(pipeline.execute(fail));
      await control.close();
      await settle(pipeline.execute(fail));
      expect(provider.circuitState).toBe('closed');
      await settle(pipeline.execute(fail));
      expect(provider.circuitState).toBe('open');
    });

    it('a snapshot imported while calls run voids them: their outcomes are not counted', async () => {
      const { pipeline, provider } = breaker({ kind: 'consecutive', failureThreshold: 1 });
      const inFlight = deferred<string>();
      const running = settle(pipeline.execute(() => inFlight.promise));
      await nextTurn();
      await provider.importSnapshot(await provider.exportSnapshot());
      inFlight.reject(down);
      expect(await running).toBe(down);
      expect(provider.circuitState).toBe('closed');
      expect((await provider.exportSnapshot()).metrics).toEqual({ kind: 'consecutive', consecutiveFailures: 0 });
    });
  });

  describe('one store, many circuits', () => {
    it('keeps circuits of different keys apart however calls interleave', async () => {
      const store = new InMemoryCircuitBreakerStateStore();
      const time = new FakeTimeProvider();
      const a = breaker({ kind: 'consecutive', failureThreshold: 1, stateStore: store, circuitKey: 'a' }, time);
      const b = breaker({ kind: 'consecutive', failureThreshold: 1, stateStore: store, circuitKey: 'b' }, time);
      await settle(a.pipeline.execute(fail));
      await expect(b.pipeline.execute(ok)).resolves.toBe('ok');
      expect(await settle(a.pipeline.execute(ok))).toMatchObject({ name: 'BrokenCircuitError' });
      await expect(b.pipeline.execute(ok)).resolves.toBe('ok');
      expect([...store.keys()].sort()).toEqual(['a', 'b']);
    });

    it('a circuit another breaker opened rejects without the cause of an earlier, closed period', async () => {
      const store = new InMemoryCircuitBreakerStateStore();
      const time = new FakeTimeProvider();
      const options = {
        kind: 'consecutive' as const,
        failureThreshold: 1,
        breakDuration: 100,
        stateStore: store,
        circuitKey: 'k',
      };
      const a = breaker(options, time);
      const b = breaker(options, time);
      await settle(a.pipeline.execute(fail)); // a opens it, with its failure
      time.advance(100);
      await a.pipeline.execute(ok); // a's probe closes it
      const other = new Error('seen by b only');
      await settle(b.pipeline.execute(() => Promise.reject(other))); // b opens it
      const rejected = (await settle(a.pipeline.execute(ok))) as Error;
      expect(rejected.name).toBe('BrokenCircuitError');
      expect(rejected.cause).toBeUndefined();
    });

    it('delete forgets a circuit: its next call finds it closed', async () => {
      const store = new InMemoryCircuitBreakerStateStore();
      const { pipeline } = breaker({ kind: 'consecutive', failureThreshold: 1, stateStore: store, circuitKey: 'k' });
      await settle(pipeline.execute(fail));
      expect(await settle(pipeline.execute(ok))).toMatchObject({ name: 'BrokenCircuitError' });
      expect(store.delete('k')).toBe(true);
      expect(store.delete('k')).toBe(false);
      expect([...store.keys()]).toEqual([]);
      await expect(pipeline.execute(ok)).resolves.toBe('ok');
    });

    it('an imported circuit keeps its state while other circuits of the store are used', async () => {
      const store = new InMemoryCircuitBreakerStateStore();
      const time = new FakeTimeProvider(1_000);
      const a = breaker({ kind: 'consecutive', failureThreshold: 1, stateStore: store, circuitKey: 'a' }, time);
      const b = breaker({ kind: 'consecutive', failureThreshold: 1, stateStore: store, circuitKey: 'b' }, time);
      const opened = { ...(await a.provider.exportSnapshot()), state: 'open' as const, blockedUntil: 5_000 };
      await a.provider.importSnapshot(opened);
      await expect(b.pipeline.execute(ok)).resolves.toBe('ok');
      expect(await settle(a.pipeline.execute(ok))).toMatchObject({ name: 'BrokenCircuitError', retryAfter: 4_000 });
      expect([...store.keys()].sort()).toEqual(['a', 'b']);
    });

    it('deleting another key keeps the circuit in use', async () => {
      const store = new InMemoryCircuitBreakerStateStore();
      const time = new FakeTimeProvider();
      const a = breaker({ kind: 'consecutive', failureThreshold: 1, stateStore: store, circuitKey: 'a' }, time);
      const b = breaker({ kind: 'consecutive', failureThreshold: 1, stateStore: store, circuitKey: 'b' }, time);
      await b.pipeline.execute(ok);
      await settle(a.pipeline.execute(fail));
      expect(store.delete('b')).toBe(true);
      expect(await settle(a.pipeline.execute(ok))).toMatchObject({ name: 'BrokenCircuitError' });
    });

    it('a reloaded pipeline (same key, new policy) counts the outcomes of calls the old one admitted', async () => {
      const store = new InMemoryCircuitBreakerStateStore();
      const time = new FakeTimeProvider();
      const options = { kind: 'consecutive' as const, stateStore: store, circuitKey: 'k' };
      const old = breaker({ ...options, failureThreshold: 2 }, time);
      const inFlight = deferred<string>();
      const running = settle(old.pipeline.execute(() => inFlight.promise));
      await nextTurn();
      const reloaded = breaker({ ...options, failureThreshold: 1 }, time);
      await reloaded.pipeline.execute(ok); // the store now applies the new policy
      inFlight.reject(down);
      await running;
      expect((await reloaded.provider.exportSnapshot()).metrics).toEqual({
        kind: 'consecutive',
        consecutiveFailures: 1,
      });
      await settle(reloaded.pipeline.execute(fail));
      expect(reloaded.provider.circuitState).toBe('open');
    });

    it('a reloaded pipeline applies its new policy from its first call on', async () => {
      const store = new InMemoryCircuitBreakerStateStore();
      const time = new FakeTimeProvider();
      const options = { kind: 'consecutive' as const, stateStore: store, circuitKey: 'k' };
      const old = breaker({ ...options, failureThreshold: 5 }, time);
      await old.pipeline.execute(ok);
      const reloaded = breaker({ ...options, failureThreshold: 1 }, time);
      await settle(reloaded.pipeline.execute(fail));
      expect(reloaded.provider.circuitState).toBe('open');
    });

    it('a reload during half-open keeps the probes taken: no second probe slips in', async () => {
      const store = new InMemoryCircuitBreakerStateStore();
      const time = new FakeTimeProvider();
      const options = {
        kind: 'consecutive' as const,
        failureThreshold: 1,
        breakDuration: 100,
        stateStore: store,
        circuitKey: 'k',
      };
      const old = breaker(options, time);
      await settle(old.pipeline.execute(fail));
      time.advance(100);
      const probe = deferred<string>();
      const probing = old.pipeline.execute(() => probe.promise);
      await nextTurn();
      time.advance(30);
      const reloaded = breaker({ ...options, breakDuration: 200 }, time);
      let ran = false;
      const rejected = await settle(
        reloaded.pipeline.execute(async () => {
          ran = true;
          return 'second probe';
        }),
      );
      expect(ran).toBe(false);
      expect(rejected).toMatchObject({ name: 'BrokenCircuitError', retryAfter: 100 });
      expect(await reloaded.provider.exportSnapshot()).toMatchObject({
        state: 'half-open',
        halfOpenSince: 100,
        probesIssued: 1,
      });
      // The old pipeline's probe decides for the reloaded one.
      probe.resolve('ok');
      await probing;
      expect((await reloaded.provider.exportSnapshot()).state).toBe('closed');
    });

    it('a reload keeps how many probes already succeeded', async () => {
      const store = new InMemoryCircuitBreakerStateStore();
      const time = new FakeTimeProvider();
      const options = {
        kind: 'consecutive' as const,
        failureThreshold: 1,
        breakDuration: 100,
        successThresholdInHalfOpen: 2,
        stateStore: store,
        circuitKey: 'k',
      };
      const old = breaker(options, time);
      await settle(old.pipeline.execute(fail));
      time.advance(100);
      await old.pipeline.execute(ok);
      const reloaded = breaker({ ...options, breakDuration: 150 }, time);
      await reloaded.pipeline.execute(ok);
      expect(reloaded.provider.circuitState).toBe('closed');
    });
  });

  describe('snapshots from elsewhere', () => {
    const snapshot = (over: Partial<CircuitSnapshot>): CircuitSnapshot => ({
      version: 1,
      state: 'open',
      generation: 7,
      blockedUntil: 5_000,
      lastBreakDuration: 4_000,
      halfOpenSince: 0,
      halfOpenAttempts: 3,
      probesIssued: 0,
      probesSucceeded: 0,
      lastTransitionAt: 1_000,
      metrics: { kind: 'consecutive', consecutiveFailures: 4 },
      ...over,
    });

    it('restores the break, its length, the half-open attempts and the measurements', async () => {
      const time = new FakeTimeProvider(2_000);
      const attempts: number[] = [];
      const { pipeline, provider } = breaker(
        {
          kind: 'consecutive',
          failureThreshold: 5,
          breakDurationGenerator: ({ halfOpenAttempts }) => {
            attempts.push(halfOpenAttempts);
            return 100;
          },
        },
        time,
      );
      await provider.importSnapshot(snapshot({}));
      expect(await provider.exportSnapshot()).toEqual(snapshot({ generation: 8 }));
      expect(await settle(pipeline.execute(ok))).toMatchObject({ retryAfter: 3_000 });
      time.advance(3_000);
      await settle(pipeline.execute(fail)); // a failed probe: the fourth half-open attempt
      expect(attempts).toEqual([4]);
    });

    it('a closed snapshot keeps its measurements: one more failure reaches the threshold', async () => {
      const { pipeline, provider } = breaker({ kind: 'consecutive', failureThreshold: 5 });
      await provider.importSnapshot(snapshot({ state: 'closed', blockedUntil: 0 }));
      expect(provider.circuitState).toBe('closed');
      await settle(pipeline.execute(fail));
      expect(provider.circuitState).toBe('open');
    });

    it('an isolated snapshot stays isolated until closed by hand', async () => {
      const { pipeline, provider } = breaker({ kind: 'consecutive' });
      await provider.importSnapshot(snapshot({ state: 'isolated' }));
      expect(provider.circuitState).toBe('isolated');
      expect(await settle(pipeline.execute(ok))).toMatchObject({ name: 'IsolatedCircuitError' });
    });

    it('measurements of another kind are not applied', async () => {
      const { pipeline, provider } = breaker({
        kind: 'count-window',
        windowSize: 2,
        minimumThroughput: 2,
        failureRatio: 1,
      });
      await provider.importSnapshot(snapshot({ state: 'closed', blockedUntil: 0 }));
      expect((await provider.exportSnapshot()).metrics).toEqual({ kind: 'count-window', outcomes: '' });
      await settle(pipeline.execute(fail));
      expect(provider.circuitState).toBe('closed');
    });

    it('a count window restores only its newest outcomes when the snapshot holds more than it measures', async () => {
      const { pipeline, provider } = breaker({
        kind: 'count-window',
        windowSize: 3,
        minimumThroughput: 3,
        failureRatio: 1,
      });
      await provider.importSnapshot(
        snapshot({ state: 'closed', blockedUntil: 0, metrics: { kind: 'count-window', outcomes: '000111x1' } }),
      );
      expect((await provider.exportSnapshot()).metrics).toEqual({ kind: 'count-window', outcomes: '101' });
      await settle(pipeline.execute(fail));
      expect((await provider.exportSnapshot()).metrics).toEqual({ kind: 'count-window', outcomes: '011' });
      expect(provider.circuitState).toBe('closed');
      await settle(pipeline.execute(fail));
      expect(provider.circuitState).toBe('open');
    });

    it('a time window restores its buckets and keeps counting into the newest one', async () => {
      const time = new FakeTimeProvider(10_000);
      const { pipeline, provider } = breaker(
        { kind: 'time-window', samplingDuration: 1_000, minimumThroughput: 4, failureRatio: 0.75 },
        time,
      );
      await provider.importSnapshot(
        snapshot({
          state: 'closed',
          blockedUntil: 0,
          metrics: {
            kind: 'time-window',
            windows: [
              [9_200, 0, 1],
              [9_950, 1, 1],
            ],
          },
        }),
      );
      await settle(pipeline.execute(fail)); // 10 000 − 9 950 < 100: same bucket
      expect((await provider.exportSnapshot()).metrics).toEqual({
        kind: 'time-window',
        windows: [
          [9_200, 0, 1],
          [9_950, 1, 2],
        ],
      });
      expect(provider.circuitState).toBe('open'); // 3 failures of 4 calls
    });
  });

  describe('time window buckets', () => {
    it('opens a bucket per tenth of the sampling duration and drops buckets a sampling duration old', async () => {
      const time = new FakeTimeProvider(0);
      const { pipeline, provider } = breaker(
        { kind: 'time-window', samplingDuration: 1_000, minimumThroughput: 100 },
        time,
      );
      const windows = async () => ((await provider.exportSnapshot()).metrics as { windows: unknown }).windows;
      await pipeline.execute(ok);
      time.advance(99);
      await settle(pipeline.execute(fail));
      expect(await windows()).toEqual([[0, 1, 1]]);
      time.advance(1); // 100: a new bucket
      await pipeline.execute(ok);
      time.advance(150); // 250
      await pipeline.execute(ok);
      expect(await windows()).toEqual([
        [0, 1, 1],
        [100, 1, 0],
        [250, 1, 0],
      ]);
      time.advance(749); // 999: the first bucket is still in the window
      await pipeline.execute(ok);
      expect((await windows()) as unknown[]).toHaveLength(4);
      time.advance(1); // 1 000: the first bucket is a sampling duration old
      await pipeline.execute(ok);
      expect(await windows()).toEqual([
        [100, 1, 0],
        [250, 1, 0],
        [999, 2, 0],
      ]);
    });

    it('reports the health of the window when it opens, and a slow-call snapshot names its kind', async () => {
      const time = new FakeTimeProvider(0);
      const opened: OnCircuitOpenedArguments<unknown>[] = [];
      const { pipeline, provider } = breaker(
        {
          kind: 'slow-call',
          samplingDuration: 1_000,
          slowCallDuration: 50,
          minimumThroughput: 3,
          failureRatio: 0.5,
          onOpened: (a) => void opened.push(a),
        },
        time,
      );
      await pipeline.execute(ok);
      expect((await provider.exportSnapshot()).metrics).toEqual({ kind: 'slow-call', windows: [[0, 1, 0]] });
      await settle(pipeline.execute(fail));
      await settle(pipeline.execute(fail));
      expect(opened.map((a) => a.health)).toEqual([{ throughput: 3, failures: 2, failureRatio: 2 / 3 }]);
    });

    it('a hung probe of a circuit with no measurements opens with an empty health', async () => {
      const time = new FakeTimeProvider(0);
      const opened: OnCircuitOpenedArguments<unknown>[] = [];
      const { pipeline, provider } = breaker(
        { kind: 'time-window', samplingDuration: 1_000, maxHalfOpenWait: 500, onOpened: (a) => void opened.push(a) },
        time,
      );
      await provider.importSnapshot({
        version: 1,
        state: 'open',
        generation: 0,
        blockedUntil: 0,
        lastBreakDuration: 100,
        halfOpenSince: 0,
        halfOpenAttempts: 0,
        probesIssued: 0,
        probesSucceeded: 0,
        lastTransitionAt: 0,
        metrics: { kind: 'time-window', windows: [] },
      });
      void pipeline.execute(() => new Promise<string>(() => undefined));
      await nextTurn();
      time.advance(500);
      await settle(pipeline.execute(ok));
      expect(opened.map((a) => [a.reason, a.health])).toEqual([
        ['half-open-timeout', { throughput: 0, failures: 0, failureRatio: 0 }],
      ]);
    });

    it('a consecutive circuit with no failures reports an empty health when a hung probe opens it', async () => {
      const time = new FakeTimeProvider(0);
      const opened: OnCircuitOpenedArguments<unknown>[] = [];
      const { pipeline, provider } = breaker(
        { kind: 'consecutive', maxHalfOpenWait: 500, onOpened: (a) => void opened.push(a) },
        time,
      );
      await provider.importSnapshot({
        version: 1,
        state: 'open',
        generation: 0,
        blockedUntil: 0,
        lastBreakDuration: 100,
        halfOpenSince: 0,
        halfOpenAttempts: 0,
        probesIssued: 0,
        probesSucceeded: 0,
        lastTransitionAt: 0,
        metrics: { kind: 'consecutive', consecutiveFailures: 0 },
      });
      void pipeline.execute(() => new Promise<string>(() => undefined));
      await nextTurn();
      time.advance(500);
      await settle(pipeline.execute(ok));
      expect(opened.map((a) => a.health)).toEqual([{ throughput: 0, failures: 0, failureRatio: 0 }]);
    });
  });
});
