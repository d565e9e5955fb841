import { describe, expect, it, jest } from '@jest/globals';
import {
  BrokenCircuitError,
  CircuitBreakerManualControl,
  CircuitBreakerStateProvider,
  handleError,
  handleResult,
  InMemoryCircuitBreakerStateStore,
  IsolatedCircuitError,
  ResiliencePipelineBuilder,
  type CircuitBreakerStrategyOptions,
} from '../../../src/core.entry.js';
import { FakeTimeProvider } from '../../../src/testing/index.js';
import { deferred, failTimes, nextTurn, scripted } from '../../utils/flaky.js';
import { RecordingListener } from '../../utils/recording.listener.js';

const down = new Error('dependency down');
const failing = scripted<string>({ throws: down });
const ok = async () => 'ok';

function breaker(options: CircuitBreakerStrategyOptions<unknown>, time = new FakeTimeProvider()) {
  const provider = new CircuitBreakerStateProvider();
  const pipeline = new ResiliencePipelineBuilder({ name: 'deps', timeProvider: time })
    .addCircuitBreaker({ stateProvider: provider, ...options })
    .build();
  return { pipeline, provider, time };
}

async function failNTimes(pipeline: { execute: (fn: () => Promise<string>) => Promise<string> }, n: number) {
  for (let i = 0; i < n; i++) await pipeline.execute(failing).catch(() => undefined);
}

/** A consecutive breaker (threshold 1, break 100 ms) tripped once with its break just over: the next call probes. */
async function brokenThenDue(options: CircuitBreakerStrategyOptions<unknown> = {}) {
  const opened = breaker({ kind: 'consecutive', failureThreshold: 1, breakDuration: 100, ...options });
  await failNTimes(opened.pipeline, 1);
  opened.time.advance(100);
  return opened;
}

describe('circuit breaker strategy', () => {
  describe('consecutive failures', () => {
    it('opens after the threshold of failures in a row, and rejects without calling', async () => {
      const { pipeline, provider } = breaker({ kind: 'consecutive', failureThreshold: 3, breakDuration: 5_000 });
      await failNTimes(pipeline, 2);
      expect(provider.circuitState).toBe('closed');
      await failNTimes(pipeline, 1);
      expect(provider.circuitState).toBe('open');
      const fn = jest.fn(ok);
      await expect(pipeline.execute(fn)).rejects.toBeInstanceOf(BrokenCircuitError);
      expect(fn).not.toHaveBeenCalled();
    });

    it('starts counting again after a success', async () => {
      const { pipeline, provider } = breaker({ kind: 'consecutive', failureThreshold: 3 });
      await failNTimes(pipeline, 2);
      await pipeline.execute(ok);
      await failNTimes(pipeline, 2);
      expect(provider.circuitState).toBe('closed');
    });
  });

  describe('failure ratio over a time window', () => {
    it('opens once the minimum throughput is reached and the ratio is met (inclusive)', async () => {
      const { pipeline, provider } = breaker({ failureRatio: 0.5, minimumThroughput: 4, samplingDuration: 10_000 });
      await pipeline.execute(ok);
      await failNTimes(pipeline, 1);
      await pipeline.execute(ok);
      expect(provider.circuitState).toBe('closed'); // 3 calls: below the minimum throughput
      await failNTimes(pipeline, 1); // 2 of 4 failed: exactly 0.5
      expect(provider.circuitState).toBe('open');
    });

    it('forgets outcomes older than the sampling duration', async () => {
      const { pipeline, provider, time } = breaker({
        failureRatio: 0.5,
        minimumThroughput: 2,
        samplingDuration: 1_000,
      });
      await failNTimes(pipeline, 1);
      time.advance(1_000);
      await pipeline.execute(ok);
      await pipeline.execute(ok);
      await failNTimes(pipeline, 1); // 1 of 3 in the window: below 0.5
      expect(provider.circuitState).toBe('closed');
      const snapshot = await provider.exportSnapshot();
      expect(snapshot.metrics.kind).toBe('time-window');
    });

    it('keeps at most 11 buckets however long the traffic runs', async () => {
      const { pipeline, provider, time } = breaker({
        failureRatio: 1,
        minimumThroughput: 1_000,
        samplingDuration: 1_000,
      });
      for (let i = 0; i < 500; i++) {
        time.advance(37);
        await pipeline.execute(ok);
      }
      const snapshot = await provider.exportSnapshot();
      expect(snapshot.metrics.kind === 'time-window' && snapshot.metrics.windows.length).toBeLessThanOrEqual(11);
    });
  });

  describe('failure ratio over the last N calls', () => {
    it('opens when the ratio over the window is reached, forgetting older calls', async () => {
      const { pipeline, provider } = breaker({
        kind: 'count-window',
        windowSize: 4,
        failureRatio: 0.75,
        minimumThroughput: 4,
      });
      await failNTimes(pipeline, 2);
      await pipeline.execute(ok);
      await pipeline.execute(ok);
      await failNTimes(pipeline, 1); // window: F S S F → 0.5
      expect(provider.circuitState).toBe('closed');
      await failNTimes(pipeline, 1); // window: S S F F → 0.5
      expect(provider.circuitState).toBe('closed');
      await failNTimes(pipeline, 1); // window: S F F F → 0.75
      expect(provider.circuitState).toBe('open');
    });
  });

  describe('slow calls', () => {
    it('counts calls slower than the threshold as failures', async () => {
      const time = new FakeTimeProvider();
      const { pipeline, provider } = breaker(
        { kind: 'slow-call', slowCallDuration: 100, failureRatio: 0.5, minimumThroughput: 2, samplingDuration: 10_000 },
        time,
      );
      const slow = () => {
        time.advance(150);
        return 'slow but fine';
      };
      await expect(pipeline.execute(slow)).resolves.toBe('slow but fine');
      await pipeline.execute(ok);
      expect(provider.circuitState).toBe('closed'); // 1 slow of 2 — but only failures evaluate the ratio
      await pipeline.execute(slow);
      expect(provider.circuitState).toBe('open');
    });
  });

  describe('half-open', () => {
    it('admits one probe after the break; a success closes the circuit', async () => {
      const { pipeline, provider, time } = breaker({ kind: 'consecutive', failureThreshold: 1, breakDuration: 1_000 });
      await failNTimes(pipeline, 1);
      time.advance(999);
      await expect(pipeline.execute(ok)).rejects.toMatchObject({ retryAfter: 1 });
      time.advance(1);
      await expect(pipeline.execute(ok)).resolves.toBe('ok');
      expect(provider.circuitState).toBe('closed');
    });

    it('opens again when the probe fails, for another break', async () => {
      const { pipeline, provider, time } = breaker({ kind: 'consecutive', failureThreshold: 1, breakDuration: 1_000 });
      await failNTimes(pipeline, 1);
      time.advance(1_000);
      await expect(pipeline.execute(failing)).rejects.toBe(down);
      expect(provider.circuitState).toBe('open');
      await expect(pipeline.execute(ok)).rejects.toMatchObject({ retryAfter: 1_000 });
    });

    it('admits exactly permittedCallsInHalfOpen of 1,000 concurrent callers; the rest get retryAfter > 0', async () => {
      const { pipeline, time } = breaker({
        kind: 'consecutive',
        failureThreshold: 1,
        breakDuration: 1_000,
        permittedCallsInHalfOpen: 3,
      });
      await failNTimes(pipeline, 1);
      time.advance(1_000);
      let running = 0;
      const gate = deferred<void>();
      const calls = Array.from({ length: 1_000 }, () =>
        pipeline
          .execute(async () => {
            running++;
            await gate.promise;
            return 'probe';
          })
          .then(
            (v) => v,
            (e: unknown) => e,
          ),
      );
      await nextTurn();
      expect(running).toBe(3);
      gate.resolve();
      const results = await Promise.all(calls);
      expect(results.filter((r) => r === 'probe')).toHaveLength(3);
      const rejected = results.filter((r) => r instanceof BrokenCircuitError);
      expect(rejected).toHaveLength(997);
      expect(rejected.every((e) => e.retryAfter! > 0)).toBe(true);
    });

    it('closes only after successThresholdInHalfOpen successful probes', async () => {
      const { pipeline, provider } = await brokenThenDue({
        permittedCallsInHalfOpen: 3,
        successThresholdInHalfOpen: 2,
      });
      await pipeline.execute(ok);
      expect(provider.circuitState).toBe('half-open');
      await pipeline.execute(ok);
      expect(provider.circuitState).toBe('closed');
    });

    it('lets extra callers wait for the verdict when asked to, then run once the circuit closes', async () => {
      const { pipeline, time } = await brokenThenDue({
        waitForHalfOpenVerdict: true,
      });
      const probeGate = deferred<string>();
      const ran: string[] = [];
      const probe = pipeline.execute(() => probeGate.promise);
      const waiters = [1, 2, 3].map((i) => pipeline.execute(async () => void ran.push(`waiter ${i}`)));
      await nextTurn();
      expect(ran).toEqual([]);
      probeGate.resolve('probe ok');
      await expect(probe).resolves.toBe('probe ok');
      await Promise.all(waiters);
      expect(ran).toEqual(['waiter 1', 'waiter 2', 'waiter 3']);
      expect(time.pendingTimerCount).toBe(0);
    });

    it('rejects waiting callers when the probe fails', async () => {
      const { pipeline } = await brokenThenDue({
        waitForHalfOpenVerdict: true,
      });
      const probeGate = deferred<string>();
      const probe = pipeline.execute(() => probeGate.promise);
      const waiter = pipeline.execute(ok);
      await nextTurn();
      probeGate.reject(down);
      await expect(probe).rejects.toBe(down);
      await expect(waiter).rejects.toBeInstanceOf(BrokenCircuitError);
    });

    it('lets a waiting caller leave as soon as its signal aborts', async () => {
      const { pipeline } = await brokenThenDue({
        waitForHalfOpenVerdict: true,
      });
      const probe = pipeline.execute(() => new Promise<string>(() => undefined));
      const controller = new AbortController();
      const waiter = pipeline.execute(ok, { signal: controller.signal });
      await nextTurn();
      controller.abort(new Error('client left'));
      await expect(waiter).rejects.toThrow('client left');
      expect(await Promise.race([probe.then(() => 'settled'), Promise.resolve('pending')])).toBe('pending');
    });

    it('does not let a hung probe wedge the circuit: after maxHalfOpenWait it opens again', async () => {
      const opened = jest.fn<(args: { reason: string }) => void>();
      const { pipeline, provider, time } = await brokenThenDue({
        maxHalfOpenWait: 1_000,
        onOpened: opened,
      });
      void pipeline.execute(() => new Promise<string>(() => undefined)); // the probe never returns
      await nextTurn();
      time.advance(999);
      await expect(pipeline.execute(ok)).rejects.toBeInstanceOf(BrokenCircuitError);
      expect(provider.circuitState).toBe('half-open');
      time.advance(1);
      await expect(pipeline.execute(ok)).rejects.toMatchObject({ retryAfter: 100 });
      expect(provider.circuitState).toBe('open');
      expect(opened).toHaveBeenLastCalledWith(expect.objectContaining({ reason: 'half-open-timeout' }));
      time.advance(100);
      await expect(pipeline.execute(ok)).resolves.toBe('ok');
    });

    it("gives a cancelled probe's permit back instead of deciding on it", async () => {
      const { pipeline, provider } = await brokenThenDue();
      await expect(
        pipeline.execute(() => Promise.reject(new DOMException('stop', 'AbortError'))),
      ).rejects.toMatchObject({ name: 'AbortError' });
      expect(provider.circuitState).toBe('half-open');
      await expect(pipeline.execute(ok)).resolves.toBe('ok');
      expect(provider.circuitState).toBe('closed');
    });
  });

  describe('rejections', () => {
    it('carries retryAfter, the failure that opened the circuit as cause, and a message naming the circuit', async () => {
      const { pipeline, time } = breaker({
        kind: 'consecutive',
        failureThreshold: 1,
        breakDuration: 5_000,
        name: 'payments',
      });
      await failNTimes(pipeline, 1);
      time.advance(1_200);
      const error = (await pipeline.execute(ok).catch((e: unknown) => e)) as BrokenCircuitError;
      expect(error).toBeInstanceOf(BrokenCircuitError);
      expect(error).toBeInstanceOf(Error);
      expect(error.retryAfter).toBe(3_800);
      expect(error.cause).toBe(down);
      expect(error.message).toBe('The circuit "deps/payments" is open; it admits calls again in 3800 ms.');
      expect(error.name).toBe('BrokenCircuitError');
      expect(error.stack).toContain('BrokenCircuitError: The circuit "deps/payments" is open');
      expect(error.source).toEqual({ pipelineName: 'deps', strategyName: 'payments' });
    });

    it('never counts cancellation, and counts only handled outcomes', async () => {
      class NotFound extends Error {}
      const { pipeline, provider } = breaker({
        kind: 'consecutive',
        failureThreshold: 1,
        shouldHandle: handleError((e) => !(e instanceof NotFound)),
      });
      await expect(pipeline.execute(() => Promise.reject(new NotFound()))).rejects.toBeInstanceOf(NotFound);
      await expect(pipeline.execute(ok, { signal: AbortSignal.abort() })).rejects.toMatchObject({ name: 'AbortError' });
      await expect(pipeline.execute(() => Promise.reject(new DOMException('x', 'AbortError')))).rejects.toBeDefined();
      expect(provider.circuitState).toBe('closed');
      await failNTimes(pipeline, 1);
      expect(provider.circuitState).toBe('open');
      expect(provider.lastHandledOutcome).toEqual({ ok: false, error: down });
    });

    it('counts results that shouldHandle accepts', async () => {
      const provider = new CircuitBreakerStateProvider();
      const pipeline = new ResiliencePipelineBuilder<{ status: number }>()
        .addCircuitBreaker({
          kind: 'consecutive',
          failureThreshold: 2,
          stateProvider: provider,
          shouldHandle: handleResult<{ status: number }>((r) => r.status >= 500),
        })
        .build();
      await pipeline.execute(() => ({ status: 503 }));
      await pipeline.execute(() => ({ status: 500 }));
      expect(provider.circuitState).toBe('open');
    });
  });

  describe('events', () => {
    it('reports opened (with the failure and break), half-opened, closed and every state change', async () => {
      const log: string[] = [];
      const listener = new RecordingListener();
      const time = new FakeTimeProvider();
      const pipeline = new ResiliencePipelineBuilder({ timeProvider: time, telemetryListeners: [listener] })
        .addCircuitBreaker({
          kind: 'consecutive',
          failureThreshold: 1,
          breakDuration: 100,
          onOpened: ({ outcome, breakDuration, reason }) =>
            void log.push(
              `opened ${breakDuration} ${reason} ${outcome && !outcome.ok ? (outcome.error as Error).message : ''}`,
            ),
          onHalfOpened: () => void log.push('half-opened'),
          onClosed: ({ reason }) => void log.push(`closed ${reason}`),
          onStateChange: ({ from, to }) => void log.push(`${from}→${to}`),
        })
        .build();
      await pipeline.execute(failing).catch(() => undefined);
      time.advance(100);
      await pipeline.execute(ok);
      expect(log).toEqual([
        'closed→open',
        'opened 100 failure-threshold dependency down',
        'open→half-open',
        'half-opened',
        'half-open→closed',
        'closed probes-succeeded',
      ]);
      expect(listener.names().filter((n) => n.startsWith('OnCircuit'))).toEqual([
        'OnCircuitOpened',
        'OnCircuitHalfOpened',
        'OnCircuitClosed',
      ]);
    });

    it('awaits an async onHalfOpened before the probe runs', async () => {
      const order: string[] = [];
      const { pipeline, time } = breaker({
        kind: 'consecutive',
        failureThreshold: 1,
        breakDuration: 10,
        onHalfOpened: async () => {
          await Promise.resolve();
          order.push('onHalfOpened done');
        },
      });
      await failNTimes(pipeline, 1);
      time.advance(10);
      await pipeline.execute(async () => void order.push('probe'));
      expect(order).toEqual(['onHalfOpened done', 'probe']);
    });

    it('uses breakDurationGenerator with the failure count, ratio and half-open attempts', async () => {
      const seen: number[] = [];
      const { pipeline, time } = breaker({
        kind: 'consecutive',
        failureThreshold: 2,
        breakDurationGenerator: ({ halfOpenAttempts, failureCount }) => {
          seen.push(halfOpenAttempts);
          return 100 * 2 ** halfOpenAttempts + failureCount;
        },
      });
      await failNTimes(pipeline, 2);
      await expect(pipeline.execute(ok)).rejects.toMatchObject({ retryAfter: 102 });
      time.advance(102);
      await failNTimes(pipeline, 1); // failed probe
      await expect(pipeline.execute(ok)).rejects.toMatchObject({ retryAfter: 202 });
      expect(seen).toEqual([0, 1]);
    });
  });

  describe('manual control', () => {
    it('isolates and closes every breaker it drives; isolated calls fail with IsolatedCircuitError', async () => {
      const control = new CircuitBreakerManualControl();
      const a = breaker({ manualControl: control, name: 'a' });
      const b = breaker({ manualControl: control, name: 'b' });
      await control.isolate();
      expect(control.isIsolated).toBe(true);
      await expect(a.pipeline.execute(ok)).rejects.toBeInstanceOf(IsolatedCircuitError);
      await expect(b.pipeline.execute(ok)).rejects.toBeInstanceOf(IsolatedCircuitError);
      expect(b.provider.circuitState).toBe('isolated');
      await control.close();
      await expect(a.pipeline.execute(ok)).resolves.toBe('ok');
      expect(b.provider.circuitState).toBe('closed');
    });

    it('starts a breaker isolated when its control is isolated', async () => {
      const control = new CircuitBreakerManualControl({ isolated: true });
      const { pipeline } = breaker({ manualControl: control });
      await expect(pipeline.execute(ok)).rejects.toBeInstanceOf(IsolatedCircuitError);
      await control.close();
      await expect(pipeline.execute(ok)).resolves.toBe('ok');
    });

    it('stops driving a breaker whose pipeline was disposed: a rebuilt one on the same circuit reports the isolation', async () => {
      const control = new CircuitBreakerManualControl();
      const store = new InMemoryCircuitBreakerStateStore();
      const changes: string[] = [];
      const build = (version: string) =>
        breaker({
          manualControl: control,
          stateStore: store,
          circuitKey: 'billing',
          onStateChange: ({ from, to }) => void changes.push(`${version}: ${from} -> ${to}`),
        });
      const old = build('v1');
      await old.pipeline.dispose();
      const rebuilt = build('v2');
      await control.isolate();
      expect(rebuilt.provider.circuitState).toBe('isolated');
      await control.close();
      expect(changes).toEqual(['v2: closed -> isolated', 'v2: isolated -> closed']);
      expect(old.provider.circuitState).toBe('closed');
    });

    it('closes an open circuit and resets its measurements', async () => {
      const control = new CircuitBreakerManualControl();
      const { pipeline, provider } = breaker({ kind: 'consecutive', failureThreshold: 2, manualControl: control });
      await failNTimes(pipeline, 2);
      expect(provider.circuitState).toBe('open');
      await control.close();
      await failNTimes(pipeline, 1);
      expect(provider.circuitState).toBe('closed');
    });
  });

  describe('state store and snapshots', () => {
    it('shares one circuit between breakers with the same key in one store', async () => {
      const store = new InMemoryCircuitBreakerStateStore();
      const options = {
        kind: 'consecutive' as const,
        failureThreshold: 2,
        stateStore: store,
        circuitKey: 'billing-api',
      };
      const a = breaker(options);
      const b = breaker(options);
      await failNTimes(a.pipeline, 1);
      await failNTimes(b.pipeline, 1);
      await expect(a.pipeline.execute(ok)).rejects.toBeInstanceOf(BrokenCircuitError);
      expect([...store.keys()]).toEqual(['billing-api']);
    });

    it('exports a versioned, serialisable snapshot and restores it (a restart keeps the circuit open)', async () => {
      const time = new FakeTimeProvider(50_000);
      const first = breaker({ kind: 'consecutive', failureThreshold: 1, breakDuration: 10_000 }, time);
      await failNTimes(first.pipeline, 1);
      const saved = JSON.parse(JSON.stringify(await first.provider.exportSnapshot()));
      expect(saved).toMatchObject({ version: 1, state: 'open', blockedUntil: 60_000 });

      time.advance(4_000);
      const restarted = breaker({ kind: 'consecutive', failureThreshold: 1, breakDuration: 10_000 }, time);
      await restarted.provider.importSnapshot(saved);
      expect(restarted.provider.circuitState).toBe('open');
      await expect(restarted.pipeline.execute(ok)).rejects.toMatchObject({ retryAfter: 6_000 });
    });

    it('restores a half-open snapshot as ready to probe again (its probes died with the process)', async () => {
      const { pipeline, provider, time } = await brokenThenDue();
      void pipeline.execute(() => new Promise<string>(() => undefined));
      await nextTurn();
      const saved = await provider.exportSnapshot();
      expect(saved.state).toBe('half-open');
      const restarted = breaker({ kind: 'consecutive', failureThreshold: 1, breakDuration: 100 }, time);
      await restarted.provider.importSnapshot(saved);
      await expect(restarted.pipeline.execute(ok)).resolves.toBe('ok');
      expect(restarted.provider.circuitState).toBe('closed');
    });

    it('keeps circuit state when a pipeline is rebuilt with a new policy on the same store and key', async () => {
      const store = new InMemoryCircuitBreakerStateStore();
      const first = breaker({
        kind: 'consecutive',
        failureThreshold: 1,
        breakDuration: 10_000,
        stateStore: store,
        circuitKey: 'k',
      });
      await failNTimes(first.pipeline, 1);
      const reloaded = breaker({
        kind: 'consecutive',
        failureThreshold: 5,
        breakDuration: 1_000,
        stateStore: store,
        circuitKey: 'k',
      });
      await expect(reloaded.pipeline.execute(ok)).rejects.toBeInstanceOf(BrokenCircuitError);
    });
  });

  describe('validation', () => {
    it('lists every invalid option, including options that belong to another kind', () => {
      expect(() =>
        new ResiliencePipelineBuilder()
          .addCircuitBreaker({
            kind: 'consecutive',
            failureThreshold: 0,
            failureRatio: 0.5,
            breakDuration: -1,
            permittedCallsInHalfOpen: 2,
            successThresholdInHalfOpen: 3,
          })
          .addCircuitBreaker({ kind: 'count-window', windowSize: 10, minimumThroughput: 20, failureRatio: 1.5 })
          .addCircuitBreaker({ stateStore: new InMemoryCircuitBreakerStateStore() })
          .build(),
      ).toThrow(
        new RegExp(
          [
            'strategies\\[0\\] \\(circuit-breaker\\)\\.failureThreshold: 0 must be an integer >= 1',
            'strategies\\[0\\] \\(circuit-breaker\\)\\.breakDuration: -1 must be a number >= 1',
            'strategies\\[0\\] \\(circuit-breaker\\)\\.failureRatio: 0\\.5 applies only to kind "time-window" or "count-window" or "slow-call", not "consecutive"',
            'strategies\\[1\\] \\(circuit-breaker\\)\\.failureRatio: 1\\.5 must be a number > 0 and <= 1',
            'strategies\\[1\\] \\(circuit-breaker\\)\\.minimumThroughput: 20 must be <= windowSize \\(10\\)',
            'strategies\\[2\\] \\(circuit-breaker\\)\\.circuitKey: undefined is required with a shared stateStore',
          ].join('[\\s\\S]*'),
        ),
      );
    });
  });

  it('recovers: a dependency that comes back closes the circuit on the first probe', async () => {
    const { pipeline, provider, time } = breaker({ kind: 'consecutive', failureThreshold: 2, breakDuration: 1_000 });
    const dependency = failTimes(2, 'back');
    await pipeline.execute(dependency).catch(() => undefined);
    await pipeline.execute(dependency).catch(() => undefined);
    time.advance(1_000);
    await expect(pipeline.execute(dependency)).resolves.toBe('back');
    expect(provider.circuitState).toBe('closed');
  });
});
