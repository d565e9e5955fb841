import { describe, expect, it } from '@jest/globals';
import {
  CircuitBreakerManualControl,
  CircuitBreakerStateProvider,
  ResilienceContext,
  ResiliencePipelineBuilder,
  type CircuitBreakerStrategyOptions,
  type OnCircuitClosedArguments,
  type OnCircuitOpenedArguments,
  type OnCircuitStateChangeArguments,
  type ResilienceEvent,
} from '../../../src/core.entry.js';
import { FakeTimeProvider } from '../../../src/testing/index.js';
import { deferred, isPending, nextTurn, settle } from '../../utils/flaky.js';
import { RecordingListener } from '../../utils/recording.listener.js';

const down = new Error('dependency down');
const fail = (): Promise<string> => Promise.reject(down);
const ok = (): Promise<string> => Promise.resolve('ok');

function observed(options: CircuitBreakerStrategyOptions<unknown>) {
  const time = new FakeTimeProvider();
  const listener = new RecordingListener();
  const provider = new CircuitBreakerStateProvider();
  const pipeline = new ResiliencePipelineBuilder({
    name: 'billing',
    timeProvider: time,
    telemetryListeners: [listener],
  })
    .addCircuitBreaker({ name: 'cb', stateProvider: provider, ...options })
    .build();
  const circuitEvents = (): { name: string; severity: string; args: unknown }[] =>
    listener.events
      .filter((e: ResilienceEvent) => e.eventName.startsWith('OnCircuit'))
      .map((e) => ({ name: e.eventName, severity: e.severity, args: e.arguments }));
  return { pipeline, provider, time, listener, circuitEvents };
}

describe('circuit breaker: telemetry and callbacks', () => {
  it('reports opened (error), rejected (debug), half-opened (warning) and closed (information) with their arguments', async () => {
    const { pipeline, time, circuitEvents } = observed({
      kind: 'consecutive',
      failureThreshold: 2,
      breakDuration: 100,
    });
    await settle(pipeline.execute(fail));
    await settle(pipeline.execute(fail));
    time.advance(40);
    await settle(pipeline.execute(ok));
    time.advance(60);
    await pipeline.execute(ok);
    expect(circuitEvents()).toEqual([
      {
        name: 'OnCircuitOpened',
        severity: 'error',
        args: {
          breakDuration: 100,
          reason: 'failure-threshold',
          outcome: { ok: false, error: down },
          health: { throughput: 2, failures: 2, failureRatio: 1 },
        },
      },
      { name: 'OnCircuitRejected', severity: 'debug', args: { state: 'open', retryAfter: 60 } },
      { name: 'OnCircuitHalfOpened', severity: 'warning', args: {} },
      { name: 'OnCircuitClosed', severity: 'information', args: { reason: 'probes-succeeded' } },
    ]);
  });

  it('names the breaker and pipeline as the source of its events', async () => {
    const { pipeline, listener } = observed({ kind: 'consecutive', failureThreshold: 1 });
    await settle(pipeline.execute(fail));
    const opened = listener.events.find((e) => e.eventName === 'OnCircuitOpened');
    expect(opened?.source).toMatchObject({
      pipelineName: 'billing',
      strategyName: 'cb',
      strategyType: 'circuit-breaker',
    });
  });

  it('reports a rejection while the probe is out as half-open, with the last break as retryAfter', async () => {
    const { pipeline, time, circuitEvents } = observed({
      kind: 'consecutive',
      failureThreshold: 1,
      breakDuration: 250,
    });
    await settle(pipeline.execute(fail));
    time.advance(250);
    const probe = deferred<string>();
    const running = pipeline.execute(() => probe.promise);
    await nextTurn();
    const rejected = await settle(pipeline.execute(ok));
    expect(rejected).toMatchObject({ retryAfter: 250, cause: down });
    expect((rejected as Error).message).toBe(
      'The circuit "billing/cb" is half-open and its probe calls are taken; retry after 250 ms.',
    );
    expect(circuitEvents().filter((e) => e.name === 'OnCircuitRejected')).toEqual([
      { name: 'OnCircuitRejected', severity: 'debug', args: { state: 'half-open', retryAfter: 250 } },
    ]);
    probe.resolve('ok');
    await running;
  });

  it('reports an isolated rejection without retryAfter, and the message says how to leave', async () => {
    const control = new CircuitBreakerManualControl();
    const { pipeline, circuitEvents } = observed({ manualControl: control });
    await control.isolate();
    const rejected = await settle(pipeline.execute(ok));
    expect((rejected as Error).message).toBe(
      'The circuit "billing/cb" is isolated: it admits no calls until it is closed by hand.',
    );
    expect((rejected as { retryAfter?: number }).retryAfter).toBeUndefined();
    expect((rejected as { source?: unknown }).source).toEqual({ pipelineName: 'billing', strategyName: 'cb' });
    // Manual transitions have no call, so they are not reported as events; the rejection is.
    expect(circuitEvents()).toEqual([
      { name: 'OnCircuitRejected', severity: 'debug', args: { state: 'isolated', retryAfter: undefined } },
    ]);
  });

  it('an open rejection says when the circuit admits calls again', async () => {
    const { pipeline, time } = observed({ kind: 'consecutive', failureThreshold: 1, breakDuration: 1_000 });
    await settle(pipeline.execute(fail));
    time.advance(300);
    const rejected = (await settle(pipeline.execute(ok))) as Error & { retryAfter: number; cause: unknown };
    expect(rejected.message).toBe('The circuit "billing/cb" is open; it admits calls again in 700 ms.');
    expect(rejected.retryAfter).toBe(700);
    expect(rejected.cause).toBe(down);
  });

  it('a rejection after the circuit closed by hand and opened again names the newest failure', async () => {
    const control = new CircuitBreakerManualControl();
    const { pipeline } = observed({ kind: 'consecutive', failureThreshold: 1, manualControl: control });
    await settle(pipeline.execute(fail));
    await control.close();
    const second = new Error('second outage');
    await settle(pipeline.execute(() => Promise.reject(second)));
    expect(await settle(pipeline.execute(ok))).toMatchObject({ cause: second });
  });

  it('a circuit reopened by a hung probe rejects without a cause, as open', async () => {
    const opened: OnCircuitOpenedArguments<unknown>[] = [];
    const { pipeline, time, circuitEvents } = observed({
      kind: 'consecutive',
      failureThreshold: 1,
      breakDuration: 100,
      maxHalfOpenWait: 500,
      onOpened: (a) => void opened.push(a),
    });
    await settle(pipeline.execute(fail));
    time.advance(100);
    void pipeline.execute(() => new Promise<string>(() => undefined));
    await nextTurn();
    time.advance(500);
    const rejected = (await settle(pipeline.execute(ok))) as Error & { cause: unknown; retryAfter: number };
    expect(rejected.retryAfter).toBe(100);
    expect(rejected.cause).toBeUndefined();
    expect(rejected.message).toBe('The circuit "billing/cb" is open; it admits calls again in 100 ms.');
    expect(circuitEvents().filter((e) => e.name === 'OnCircuitRejected')).toEqual([
      { name: 'OnCircuitRejected', severity: 'debug', args: { state: 'open', retryAfter: 100 } },
    ]);
    expect(opened.map((a) => [a.reason, a.isManual, a.outcome])).toEqual([
      ['failure-threshold', false, { ok: false, error: down }],
      ['half-open-timeout', false, undefined],
    ]);
  });

  it('hands onOpened the context, failure, break, reason, health and isManual; onStateChange the same transition', async () => {
    const opened: OnCircuitOpenedArguments<unknown>[] = [];
    const changes: OnCircuitStateChangeArguments[] = [];
    const { pipeline } = observed({
      kind: 'consecutive',
      failureThreshold: 1,
      breakDuration: 300,
      onOpened: (a) => void opened.push(a),
      onStateChange: (a) => void changes.push(a),
    });
    let callContext: unknown;
    await settle(
      pipeline.execute((context) => {
        callContext = context;
        return fail();
      }),
    );
    expect(opened).toHaveLength(1);
    expect(opened[0]).toMatchObject({
      outcome: { ok: false, error: down },
      breakDuration: 300,
      reason: 'failure-threshold',
      health: { throughput: 1, failures: 1, failureRatio: 1 },
      isManual: false,
    });
    expect(opened[0].context).toBe(callContext);
    expect(changes).toEqual([{ from: 'closed', to: 'open', reason: 'failure-threshold', context: callContext }]);
  });

  it('manual isolation and closing: isManual, no call context, no outcome', async () => {
    const control = new CircuitBreakerManualControl();
    const opened: OnCircuitOpenedArguments<unknown>[] = [];
    const closed: OnCircuitClosedArguments<unknown>[] = [];
    const changes: OnCircuitStateChangeArguments[] = [];
    const halfOpened: unknown[] = [];
    const { pipeline, listener } = observed({
      manualControl: control,
      onOpened: (a) => void opened.push(a),
      onClosed: (a) => void closed.push(a),
      onHalfOpened: (a) => void halfOpened.push(a),
      onStateChange: (a) => void changes.push(a),
    });
    await control.isolate();
    await control.isolate(); // already isolated: no second transition
    await control.close();
    await control.close(); // already closed: nothing to report
    expect(changes).toEqual([
      { from: 'closed', to: 'isolated', reason: 'manual-isolate', context: undefined },
      { from: 'isolated', to: 'closed', reason: 'manual-close', context: undefined },
    ]);
    expect(opened).toHaveLength(1);
    expect(opened[0]).toMatchObject({
      outcome: undefined,
      breakDuration: Infinity,
      reason: 'manual-isolate',
      health: undefined,
      isManual: true,
    });
    expect(opened[0].context).toBeInstanceOf(ResilienceContext);
    expect(halfOpened).toEqual([]);
    expect(closed).toEqual([{ context: undefined, outcome: undefined, reason: 'manual-close', isManual: true }]);
    expect(listener.events).toEqual([]);
    await expect(pipeline.execute(ok)).resolves.toBe('ok');
  });

  it('manual close of an open circuit: onClosed with isManual, then calls run again', async () => {
    const control = new CircuitBreakerManualControl();
    const closed: OnCircuitClosedArguments<unknown>[] = [];
    const { pipeline, provider } = observed({
      kind: 'consecutive',
      failureThreshold: 1,
      manualControl: control,
      onClosed: (a) => void closed.push(a),
    });
    await settle(pipeline.execute(fail));
    expect(provider.circuitState).toBe('open');
    await control.close();
    expect(provider.circuitState).toBe('closed');
    expect(closed).toEqual([{ context: undefined, outcome: undefined, reason: 'manual-close', isManual: true }]);
  });

  it('hands onClosed the probe outcome and its context', async () => {
    const closed: OnCircuitClosedArguments<unknown>[] = [];
    const { pipeline, time } = observed({
      kind: 'consecutive',
      failureThreshold: 1,
      breakDuration: 10,
      onClosed: (a) => void closed.push(a),
    });
    await settle(pipeline.execute(fail));
    time.advance(10);
    let probeContext: unknown;
    await pipeline.execute((context) => {
      probeContext = context;
      return ok();
    });
    expect(closed).toHaveLength(1);
    expect(closed[0]).toMatchObject({
      outcome: { ok: true, value: 'ok' },
      reason: 'probes-succeeded',
      isManual: false,
    });
    expect(closed[0].context).toBe(probeContext);
  });

  it('a handled result that opens the circuit is the outcome of onOpened and the event, but no cause', async () => {
    const opened: OnCircuitOpenedArguments<unknown>[] = [];
    const { pipeline, listener } = observed({
      kind: 'consecutive',
      failureThreshold: 1,
      shouldHandle: ({ outcome }) => outcome.ok && outcome.value === 'overloaded',
      onOpened: (a) => void opened.push(a),
    });
    await expect(pipeline.execute(async () => 'overloaded')).resolves.toBe('overloaded');
    expect(opened.map((a) => a.outcome)).toEqual([{ ok: true, value: 'overloaded' }]);
    expect(listener.events.find((e) => e.eventName === 'OnCircuitOpened')?.arguments).toMatchObject({
      outcome: { ok: true, value: 'overloaded' },
    });
    const rejected = (await settle(pipeline.execute(ok))) as Error;
    expect(rejected.name).toBe('BrokenCircuitError');
    expect(rejected.cause).toBeUndefined();
  });

  it('hands onStateChange every transition of a cycle with its reason, the half-opening included', async () => {
    const changes: Omit<OnCircuitStateChangeArguments, 'context'>[] = [];
    const { pipeline, time } = observed({
      kind: 'consecutive',
      failureThreshold: 1,
      breakDuration: 10,
      onStateChange: ({ from, to, reason }) => void changes.push({ from, to, reason }),
    });
    await settle(pipeline.execute(fail));
    time.advance(10);
    await settle(pipeline.execute(fail));
    time.advance(10);
    await pipeline.execute(ok);
    expect(changes).toEqual([
      { from: 'closed', to: 'open', reason: 'failure-threshold' },
      { from: 'open', to: 'half-open', reason: 'break-elapsed' },
      { from: 'half-open', to: 'open', reason: 'probe-failed' },
      { from: 'open', to: 'half-open', reason: 'break-elapsed' },
      { from: 'half-open', to: 'closed', reason: 'probes-succeeded' },
    ]);
  });

  it('a failed probe reopens with reason probe-failed and the probe failure as outcome', async () => {
    const opened: OnCircuitOpenedArguments<unknown>[] = [];
    const { pipeline, time } = observed({
      kind: 'consecutive',
      failureThreshold: 1,
      breakDuration: 10,
      onOpened: (a) => void opened.push(a),
    });
    await settle(pipeline.execute(fail));
    time.advance(10);
    const probeFailure = new Error('still down');
    await settle(pipeline.execute(() => Promise.reject(probeFailure)));
    expect(opened.map((a) => [a.reason, a.outcome])).toEqual([
      ['failure-threshold', { ok: false, error: down }],
      ['probe-failed', { ok: false, error: probeFailure }],
    ]);
  });

  it('a callback that throws or rejects never breaks the call, and an async one is awaited', async () => {
    const order: string[] = [];
    const { pipeline, provider } = observed({
      kind: 'consecutive',
      failureThreshold: 1,
      onStateChange: () => {
        throw new Error('listener bug');
      },
      onOpened: async () => {
        await Promise.resolve();
        order.push('onOpened done');
        throw new Error('async listener bug');
      },
    });
    const result = await settle(pipeline.execute(fail));
    order.push('call settled');
    expect(result).toBe(down);
    expect(order).toEqual(['onOpened done', 'call settled']);
    expect(provider.circuitState).toBe('open');
  });

  it('hands onHalfOpened the context of the call that probes', async () => {
    const halfOpened: unknown[] = [];
    const { pipeline, time } = observed({
      kind: 'consecutive',
      failureThreshold: 1,
      breakDuration: 10,
      onHalfOpened: ({ context }) => void halfOpened.push(context),
    });
    await settle(pipeline.execute(fail));
    time.advance(10);
    let probeContext: unknown;
    await pipeline.execute((context) => {
      probeContext = context;
      return ok();
    });
    expect(halfOpened).toEqual([probeContext]);
    expect(probeContext).toBeInstanceOf(ResilienceContext);
  });

  it('the call that opens the circuit settles only once an async onOpened has finished', async () => {
    const gate = deferred<void>();
    const { pipeline } = observed({ kind: 'consecutive', failureThreshold: 1, onOpened: () => gate.promise });
    const call = settle(pipeline.execute(fail));
    await nextTurn();
    expect(await isPending(call)).toBe(true);
    gate.resolve();
    expect(await call).toBe(down);
  });

  it('the probe that closes the circuit settles only once an async onClosed has finished', async () => {
    const gate = deferred<void>();
    const { pipeline, time } = observed({
      kind: 'consecutive',
      failureThreshold: 1,
      breakDuration: 10,
      onClosed: () => gate.promise,
    });
    await settle(pipeline.execute(fail));
    time.advance(10);
    const probe = pipeline.execute(ok);
    await nextTurn();
    expect(await isPending(probe)).toBe(true);
    gate.resolve();
    await expect(probe).resolves.toBe('ok');
  });

  it('emits no events when no listener is attached, and callbacks still run', async () => {
    const time = new FakeTimeProvider();
    const states: string[] = [];
    const pipeline = new ResiliencePipelineBuilder({ timeProvider: time })
      .addCircuitBreaker({
        kind: 'consecutive',
        failureThreshold: 1,
        breakDuration: 10,
        onStateChange: ({ to }) => void states.push(to),
      })
      .build();
    await settle(pipeline.execute(fail));
    await settle(pipeline.execute(ok));
    time.advance(10);
    await pipeline.execute(ok);
    expect(states).toEqual(['open', 'half-open', 'closed']);
  });
});
