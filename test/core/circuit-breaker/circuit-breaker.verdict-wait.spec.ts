import { describe, expect, it } from '@jest/globals';
import {
  BrokenCircuitError,
  CircuitBreakerManualControl,
  CircuitBreakerStateProvider,
  IsolatedCircuitError,
  ResiliencePipelineBuilder,
  type CircuitAcquireResult,
  type CircuitBreakerStateStore,
  type CircuitBreakerStrategyOptions,
  type CircuitSnapshot,
  type CircuitTransition,
} from '../../../src/core.entry.js';
import { FakeTimeProvider } from '../../../src/testing/index.js';
import { deferred, isPending, nextTurn, settle } from '../../utils/flaky.js';

const down = new Error('dependency down');
const fail = (): Promise<string> => Promise.reject(down);
const ok = (): Promise<string> => Promise.resolve('ok');

/** A consecutive breaker (threshold 1, break 100 ms) whose callers wait for the verdict, with a probe out. */
async function probing(options: CircuitBreakerStrategyOptions<unknown> = {}) {
  const time = new FakeTimeProvider();
  const provider = new CircuitBreakerStateProvider();
  const pipeline = new ResiliencePipelineBuilder({ name: 'wait', timeProvider: time })
    .addCircuitBreaker({
      kind: 'consecutive',
      failureThreshold: 1,
      breakDuration: 100,
      maxHalfOpenWait: 1_000,
      waitForHalfOpenVerdict: true,
      stateProvider: provider,
      ...options,
    })
    .build();
  await settle(pipeline.execute(fail));
  time.advance(100);
  const probe = deferred<string>();
  const probeCall = pipeline.execute(() => probe.promise);
  await nextTurn();
  expect(provider.circuitState).toBe('half-open');
  return { pipeline, provider, time, probe, probeCall };
}

describe('circuit breaker: waiting for the half-open verdict', () => {
  it('keeps one timer for the verdict deadline however many callers wait', async () => {
    const { pipeline, time, probe, probeCall } = await probing();
    const waiters = [1, 2, 3].map(() => pipeline.execute(ok));
    await nextTurn();
    expect(time.pendingTimerCount).toBe(1);
    probe.resolve('probe');
    await probeCall;
    await expect(Promise.all(waiters)).resolves.toEqual(['ok', 'ok', 'ok']);
    expect(time.pendingTimerCount).toBe(0);
  });

  it('a caller that arrives later waits for the same deadline, not a new full wait', async () => {
    const { pipeline, time } = await probing();
    const first = settle(pipeline.execute(ok));
    time.advance(600);
    const second = settle(pipeline.execute(ok));
    await nextTurn();
    time.advance(399);
    await nextTurn();
    expect(await isPending(first)).toBe(true);
    expect(await isPending(second)).toBe(true);
    time.advance(1);
    expect(await first).toBeInstanceOf(BrokenCircuitError);
    expect(await second).toBeInstanceOf(BrokenCircuitError);
    expect(time.pendingTimerCount).toBe(0);
  });

  it('the last waiter to abort takes the deadline timer with it', async () => {
    const { pipeline, time, probe, probeCall } = await probing();
    const a = new AbortController();
    const b = new AbortController();
    const first = settle(pipeline.execute(ok, { signal: a.signal }));
    const second = settle(pipeline.execute(ok, { signal: b.signal }));
    await nextTurn();
    a.abort(new Error('first left'));
    expect(await first).toEqual(new Error('first left'));
    // Another caller still waits: the deadline stays armed.
    expect(time.pendingTimerCount).toBe(1);
    b.abort(new Error('second left'));
    expect(await second).toEqual(new Error('second left'));
    expect(time.pendingTimerCount).toBe(0);
    probe.resolve('probe');
    await expect(probeCall).resolves.toBe('probe');
  });

  it('a waiter that aborts leaves the others waiting: they run once the probe closes the circuit', async () => {
    const { pipeline, probe, probeCall } = await probing();
    const leaving = new AbortController();
    const gone = settle(pipeline.execute(ok, { signal: leaving.signal }));
    const staying = pipeline.execute(ok);
    await nextTurn();
    leaving.abort(new Error('left'));
    expect(await gone).toEqual(new Error('left'));
    expect(await isPending(staying)).toBe(true);
    probe.resolve('probe');
    await probeCall;
    await expect(staying).resolves.toBe('ok');
  });

  it('aborting after being admitted does not reject a waiter twice or disturb the next wait', async () => {
    const { pipeline, provider, time, probe, probeCall } = await probing({ permittedCallsInHalfOpen: 1 });
    const controller = new AbortController();
    const admitted = deferred<string>();
    // Woken by the probe's success, this caller runs as a normal call of the closed circuit.
    const waiter = pipeline.execute(() => admitted.promise, { signal: controller.signal });
    await nextTurn();
    probe.resolve('probe');
    await probeCall;
    await nextTurn();
    expect(provider.circuitState).toBe('closed');
    controller.abort(new Error('too late'));
    admitted.resolve('ran');
    await expect(waiter).resolves.toBe('ran');
    expect(time.pendingTimerCount).toBe(0);
  });

  it("a woken waiter leaves no listener on its caller's signal", async () => {
    const { pipeline, probe, probeCall } = await probing();
    const controller = new AbortController();
    const live = new Set<unknown>();
    const { signal } = controller;
    const add = signal.addEventListener.bind(signal);
    const remove = signal.removeEventListener.bind(signal);
    type Listen = AbortSignal['addEventListener'];
    type Unlisten = AbortSignal['removeEventListener'];
    signal.addEventListener = (...args: Parameters<Listen>) => {
      if (args[0] === 'abort') live.add(args[1]);
      add(...args);
    };
    signal.removeEventListener = (...args: Parameters<Unlisten>) => {
      if (args[0] === 'abort') live.delete(args[1]);
      remove(...args);
    };
    const waiter = pipeline.execute(ok, { signal });
    await nextTurn();
    expect(live.size).toBe(1);
    probe.resolve('probe');
    await probeCall;
    await expect(waiter).resolves.toBe('ok');
    expect(live.size).toBe(0);
  });

  it('a caller whose signal is already aborted when it would wait is rejected with its reason at once', async () => {
    const { pipeline, time, probe, probeCall } = await probing();
    const controller = new AbortController();
    const reason = new Error('gone already');
    controller.abort(reason);
    await expect(pipeline.execute(ok, { signal: controller.signal })).rejects.toBe(reason);
    expect(time.pendingTimerCount).toBe(0);
    probe.resolve('probe');
    await probeCall;
  });

  it('disposing the pipeline releases waiting callers: they try once more and are rejected while the probe is out', async () => {
    const { pipeline, time, provider, probe, probeCall } = await probing();
    const waiter = settle(pipeline.execute(ok));
    await nextTurn();
    expect(await isPending(waiter)).toBe(true);
    await pipeline.dispose();
    const error = await waiter;
    expect(error).toBeInstanceOf(BrokenCircuitError);
    expect((error as Error).message).toContain('half-open');
    expect(time.pendingTimerCount).toBe(0);
    // No caller waits any more after disposal.
    expect(await settle(pipeline.execute(ok))).toBeInstanceOf(BrokenCircuitError);
    expect(time.pendingTimerCount).toBe(0);
    probe.resolve('probe');
    await probeCall;
    expect(provider.circuitState).toBe('closed');
  });

  it('without waitForHalfOpenVerdict, callers beyond the probes are rejected and arm no timer', async () => {
    const { pipeline, time, probe, probeCall } = await probing({ waitForHalfOpenVerdict: false });
    expect(await settle(pipeline.execute(ok))).toBeInstanceOf(BrokenCircuitError);
    expect(time.pendingTimerCount).toBe(0);
    probe.resolve('probe');
    await probeCall;
  });
});

describe('circuit breaker: waiting for a verdict a shared store keeps', () => {
  /** A store shared with other processes, as one process sees it: scripted admissions and manual transitions. */
  class ScriptedStore implements CircuitBreakerStateStore {
    constructor(
      private readonly answers: CircuitAcquireResult[],
      private readonly manual: { close?: CircuitTransition; isolate?: CircuitTransition } = {},
    ) {}
    acquire(): CircuitAcquireResult {
      return this.answers.length > 1 ? this.answers.shift()! : this.answers[0];
    }
    record(): undefined {
      return undefined;
    }
    isolate(): CircuitTransition | undefined {
      return this.manual.isolate;
    }
    close(): CircuitTransition | undefined {
      return this.manual.close;
    }
    exportSnapshot(): CircuitSnapshot {
      throw new Error('not needed');
    }
    importSnapshot(): void {}
  }

  const waiting = (verdictDueAt: number): CircuitAcquireResult => ({ state: 'half-open', retryAfter: 5, verdictDueAt });
  const open: CircuitAcquireResult = { state: 'open', retryAfter: 100 };

  function sharedPipeline(store: CircuitBreakerStateStore, control?: CircuitBreakerManualControl) {
    const time = new FakeTimeProvider(0);
    const pipeline = new ResiliencePipelineBuilder({ name: 'fleet', timeProvider: time })
      .addCircuitBreaker({ stateStore: store, waitForHalfOpenVerdict: true, manualControl: control })
      .build();
    return { pipeline, time };
  }

  it.each([
    [1_000, 500],
    [500, 1_000],
  ])('callers told %d ms and %d ms are both released at the earlier time', async (first, second) => {
    const { pipeline, time } = sharedPipeline(new ScriptedStore([waiting(first), waiting(second), open]));
    const a = settle(pipeline.execute(ok));
    const b = settle(pipeline.execute(ok));
    await nextTurn();
    expect(time.pendingTimerCount).toBe(1);
    time.advance(499);
    expect(await isPending(a)).toBe(true);
    expect(await isPending(b)).toBe(true);
    time.advance(1);
    expect(await a).toBeInstanceOf(BrokenCircuitError);
    expect(await b).toBeInstanceOf(BrokenCircuitError);
    expect(time.pendingTimerCount).toBe(0);
  });

  it('closing by hand releases waiting callers at once, whatever state this process last saw', async () => {
    const control = new CircuitBreakerManualControl();
    const store = new ScriptedStore([waiting(1_000), { state: 'closed', permit: { generation: 1, probe: false } }], {
      close: { from: 'open', to: 'closed', reason: 'manual-close' },
    });
    const { pipeline, time } = sharedPipeline(store, control);
    const waiter = pipeline.execute(ok);
    await nextTurn();
    await control.close();
    await expect(waiter).resolves.toBe('ok');
    expect(time.now()).toBe(0);
    expect(time.pendingTimerCount).toBe(0);
  });

  it('isolating by hand releases waiting callers at once: they are rejected as isolated', async () => {
    const control = new CircuitBreakerManualControl();
    const store = new ScriptedStore([waiting(1_000), { state: 'isolated' }], {
      isolate: { from: 'open', to: 'isolated', reason: 'manual-isolate' },
    });
    const { pipeline, time } = sharedPipeline(store, control);
    const waiter = settle(pipeline.execute(ok));
    await nextTurn();
    await control.isolate();
    expect(await waiter).toBeInstanceOf(IsolatedCircuitError);
    expect(time.pendingTimerCount).toBe(0);
  });

  it('an open answer never makes a caller wait, even with a verdict time', async () => {
    const { pipeline, time } = sharedPipeline(
      new ScriptedStore([{ state: 'open', retryAfter: 30, verdictDueAt: 1_000 }]),
    );
    expect(await settle(pipeline.execute(ok))).toMatchObject({ name: 'BrokenCircuitError', retryAfter: 30 });
    expect(time.pendingTimerCount).toBe(0);
  });
});
