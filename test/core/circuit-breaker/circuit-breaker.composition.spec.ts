import { describe, expect, it } from '@jest/globals';
import {
  BrokenCircuitError,
  CircuitBreakerManualControl,
  CircuitBreakerStateProvider,
  handleResult,
  InMemoryCircuitBreakerStateStore,
  IsolatedCircuitError,
  ResiliencePipelineBuilder,
  type CircuitAcquireResult,
  type CircuitBreakerStrategyOptions,
  type CircuitPolicy,
  type ResilienceEvent,
} from '../../../src/core.entry.js';
import { FakeTimeProvider } from '../../../src/testing/index.js';
import { AsyncCircuitStore } from '../../utils/async-circuit.store.js';
import { deferred, nextTurn, settle } from '../../utils/flaky.js';

const down = new Error('dependency down');
const fail = (): Promise<string> => Promise.reject(down);
const ok = (): Promise<string> => Promise.resolve('ok');

/** The breaker next to other strategies (retry outside, timeout inside), as pipelines usually hold it. */
function composed(options: CircuitBreakerStrategyOptions<unknown>, time = new FakeTimeProvider()) {
  const provider = new CircuitBreakerStateProvider();
  const pipeline = new ResiliencePipelineBuilder({ name: 'composed', timeProvider: time })
    .addRetry({ maxRetryAttempts: 0 })
    .addCircuitBreaker({ stateProvider: provider, ...options })
    .addTimeout(10_000)
    .build();
  return { pipeline, provider, time };
}

describe('circuit breaker between other strategies', () => {
  it('counts failures and resets the count on a success', async () => {
    const { pipeline, provider } = composed({ kind: 'consecutive', failureThreshold: 2 });
    await settle(pipeline.execute(fail));
    await expect(pipeline.execute(ok)).resolves.toBe('ok');
    await settle(pipeline.execute(fail));
    expect(provider.circuitState).toBe('closed');
    await settle(pipeline.execute(fail));
    expect(provider.circuitState).toBe('open');
    expect(await settle(pipeline.execute(ok))).toBeInstanceOf(BrokenCircuitError);
  });

  it('probes after the break and closes on success', async () => {
    const { pipeline, provider, time } = composed({ kind: 'consecutive', failureThreshold: 1, breakDuration: 100 });
    await settle(pipeline.execute(fail));
    time.advance(100);
    await expect(pipeline.execute(ok)).resolves.toBe('ok');
    expect(provider.circuitState).toBe('closed');
  });

  it('judges results with shouldHandle: a handled result opens the circuit and is still returned', async () => {
    const { pipeline, provider } = composed({
      kind: 'consecutive',
      failureThreshold: 1,
      shouldHandle: handleResult((r) => r === 'bad'),
    });
    await expect(pipeline.execute(async () => 'good')).resolves.toBe('good');
    expect(provider.circuitState).toBe('closed');
    await expect(pipeline.execute(async () => 'bad')).resolves.toBe('bad');
    expect(provider.circuitState).toBe('open');
    expect(provider.lastHandledOutcome).toEqual({ ok: true, value: 'bad' });
  });

  it('counts each success once: a time window measures one success and one failure as a ratio of one half', async () => {
    const { pipeline, provider } = composed({ kind: 'time-window', minimumThroughput: 2, failureRatio: 0.5 });
    await pipeline.execute(ok);
    await settle(pipeline.execute(fail));
    expect(provider.circuitState).toBe('open');
  });

  it('a value an inner retry judged is returned and counted as a success', async () => {
    const provider = new CircuitBreakerStateProvider();
    const pipeline = new ResiliencePipelineBuilder<string>()
      .addCircuitBreaker({ kind: 'consecutive', failureThreshold: 2, stateProvider: provider })
      .addRetry({ delay: 0, maxRetryAttempts: 1, shouldHandle: ({ outcome }) => outcome.ok && outcome.value === 'bad' })
      .addTimeout(10_000)
      .build();
    const answers = ['bad', 'good'];
    await settle(pipeline.execute(fail));
    await expect(pipeline.execute(async () => answers.shift()!)).resolves.toBe('good');
    await settle(pipeline.execute(fail));
    expect(provider.circuitState).toBe('closed');
    await settle(pipeline.execute(fail));
    expect(provider.circuitState).toBe('open');
  });

  it.each(['sync', 'async'])('with a %s shouldHandle, a success resets the consecutive count', async (mode) => {
    const shouldHandle =
      mode === 'sync'
        ? ({ outcome }: { outcome: { ok: boolean } }) => !outcome.ok
        : async ({ outcome }: { outcome: { ok: boolean } }) => !outcome.ok;
    const { pipeline, provider } = composed({ kind: 'consecutive', failureThreshold: 2, shouldHandle });
    await settle(pipeline.execute(fail));
    await pipeline.execute(ok);
    await settle(pipeline.execute(fail));
    expect(provider.circuitState).toBe('closed');
    await settle(pipeline.execute(fail));
    expect(provider.circuitState).toBe('open');
  });

  it('counts slow successes of a slow-call breaker', async () => {
    const time = new FakeTimeProvider();
    const { pipeline, provider } = composed(
      { kind: 'slow-call', slowCallDuration: 50, minimumThroughput: 2, failureRatio: 1 },
      time,
    );
    for (let i = 0; i < 2; i++) {
      const call = pipeline.execute(() => time.delay(50).then(() => 'slow'));
      await time.advanceAsync(50);
      await expect(call).resolves.toBe('slow');
    }
    expect(provider.circuitState).toBe('open');
  });

  it('a slow-call breaker without slowCallDuration counts calls of a minute or more', async () => {
    const time = new FakeTimeProvider();
    const { pipeline, provider } = composed({ kind: 'slow-call', minimumThroughput: 1, failureRatio: 1 }, time);
    const quick = pipeline.execute(() => time.delay(59_999).then(() => 'quick enough'));
    await time.advanceAsync(59_999);
    await expect(quick).resolves.toBe('quick enough');
    expect(provider.circuitState).toBe('closed');
    const minute = pipeline.execute(() => time.delay(60_000).then(() => 'a minute'));
    await time.advanceAsync(60_000);
    await expect(minute).resolves.toBe('a minute');
    expect(provider.circuitState).toBe('open');
  });

  it('does not count a call the caller cancelled', async () => {
    const { pipeline, provider } = composed({ kind: 'consecutive', failureThreshold: 1 });
    const controller = new AbortController();
    const running = settle(
      pipeline.execute(
        (ctx) =>
          new Promise<string>((_, reject) => ctx.signal.addEventListener('abort', () => reject(new Error('aborted')))),
        { signal: controller.signal },
      ),
    );
    await nextTurn();
    controller.abort(new Error('caller left'));
    await running;
    expect(provider.circuitState).toBe('closed');
  });

  it('a breaker isolated from the start rejects from the first call', async () => {
    const control = new CircuitBreakerManualControl({ isolated: true });
    const { pipeline } = composed({ manualControl: control });
    expect(await settle(pipeline.execute(ok))).toBeInstanceOf(IsolatedCircuitError);
    await control.close();
    await expect(pipeline.execute(ok)).resolves.toBe('ok');
  });
});

describe('circuit breaker on a store that answers asynchronously', () => {
  function onStore(options: CircuitBreakerStrategyOptions<unknown>, inline = false, isolateTurns = 1) {
    const time = new FakeTimeProvider(1_000);
    const store = new AsyncCircuitStore();
    store.isolateTurns = isolateTurns;
    const provider = new CircuitBreakerStateProvider();
    const builder = new ResiliencePipelineBuilder({ name: 'shared', timeProvider: time });
    if (inline) builder.addRetry({ maxRetryAttempts: 0 });
    const pipeline = builder
      .addCircuitBreaker({ stateStore: store, stateProvider: provider, circuitKey: 'k', ...options })
      .build();
    return { pipeline, provider, time, store };
  }

  it.each([false, true])('runs a whole cycle: opens, rejects, probes, closes (next to a retry: %p)', async (inline) => {
    const states: string[] = [];
    const { pipeline, provider, time } = onStore(
      { kind: 'consecutive', failureThreshold: 2, breakDuration: 100, onStateChange: ({ to }) => void states.push(to) },
      inline,
    );
    await settle(pipeline.execute(fail));
    await expect(pipeline.execute(ok)).resolves.toBe('ok');
    await settle(pipeline.execute(fail));
    await settle(pipeline.execute(fail));
    expect(provider.circuitState).toBe('open');
    expect(await settle(pipeline.execute(ok))).toMatchObject({ retryAfter: 100 });
    time.advance(100);
    await expect(pipeline.execute(ok)).resolves.toBe('ok');
    expect(states).toEqual(['open', 'half-open', 'closed']);
  });

  it('tells the store the time of every outcome, successes included', async () => {
    const { pipeline, time, store } = onStore({ kind: 'consecutive', failureThreshold: 5 });
    await pipeline.execute(ok);
    time.advance(25);
    await settle(pipeline.execute(fail));
    expect(store.calls.filter((c) => c.op === 'record').map((c) => [c.result, c.now])).toEqual([
      ['success', 1_000],
      ['failure', 1_025],
    ]);
  });

  it('a store that fails to record a success does not fail the call', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const { pipeline, store } = onStore({ kind: 'consecutive' });
      store.failRecords = true;
      await expect(pipeline.execute(ok)).resolves.toBe('ok');
      await nextTurn();
      await nextTurn();
      expect(unhandled).toEqual([]);
      expect(store.calls.map((c) => c.op)).toEqual(['acquire', 'record']);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it.each([false, true])(
    'a control isolated from the start holds back the first calls until the store is isolated (next to a retry: %p)',
    async (inline) => {
      const control = new CircuitBreakerManualControl({ isolated: true });
      const ran: string[] = [];
      // Isolating takes the store longer than admitting a call would.
      const { pipeline, store } = onStore({ manualControl: control }, inline, 10);
      const first = await settle(pipeline.execute(async () => void ran.push('ran')));
      expect(first).toBeInstanceOf(IsolatedCircuitError);
      expect(ran).toEqual([]);
      expect(store.calls.map((c) => c.op).slice(0, 2)).toEqual(['isolate', 'acquire']);
    },
  );

  it('waits for a probe verdict through the store as well', async () => {
    const { pipeline, time } = onStore({
      kind: 'consecutive',
      failureThreshold: 1,
      breakDuration: 100,
      waitForHalfOpenVerdict: true,
    });
    await settle(pipeline.execute(fail));
    time.advance(100);
    const probe = deferred<string>();
    const probing = pipeline.execute(() => probe.promise);
    await nextTurn();
    const waiter = pipeline.execute(ok);
    await nextTurn();
    probe.resolve('probe');
    await expect(probing).resolves.toBe('probe');
    await expect(waiter).resolves.toBe('ok');
  });
});

describe('circuit breaker: how it judges an outcome', () => {
  it('a probe that succeeds while its caller aborts still counts as a success', async () => {
    const time = new FakeTimeProvider();
    const provider = new CircuitBreakerStateProvider();
    const pipeline = new ResiliencePipelineBuilder({ timeProvider: time })
      .addCircuitBreaker({ kind: 'consecutive', failureThreshold: 1, breakDuration: 10, stateProvider: provider })
      .build();
    await settle(pipeline.execute(fail));
    time.advance(10);
    const controller = new AbortController();
    const result = await pipeline.execute(
      async () => {
        controller.abort(new Error('caller left'));
        return 'done anyway';
      },
      { signal: controller.signal },
    );
    expect(result).toBe('done anyway');
    expect(provider.circuitState).toBe('closed');
  });

  it('a slow success counts as a failure even when shouldHandle (sync or async) lets it pass', async () => {
    for (const shouldHandle of [
      ({ outcome }: { outcome: { ok: boolean } }) => !outcome.ok,
      async ({ outcome }: { outcome: { ok: boolean } }) => !outcome.ok,
    ]) {
      const time = new FakeTimeProvider();
      const provider = new CircuitBreakerStateProvider();
      const pipeline = new ResiliencePipelineBuilder({ timeProvider: time })
        .addCircuitBreaker({
          kind: 'slow-call',
          slowCallDuration: 100,
          minimumThroughput: 2,
          failureRatio: 0.5,
          shouldHandle,
          stateProvider: provider,
        })
        .build();
      await pipeline.execute(ok);
      const slow = pipeline.execute(() => time.delay(100).then(() => 'slow'));
      await time.advanceAsync(100);
      await expect(slow).resolves.toBe('slow');
      expect(provider.circuitState).toBe('open');
    }
  });

  it('keeps the last handled failure, not a later success, as lastHandledOutcome', async () => {
    const provider = new CircuitBreakerStateProvider();
    const pipeline = new ResiliencePipelineBuilder()
      .addCircuitBreaker({
        kind: 'consecutive',
        failureThreshold: 5,
        shouldHandle: ({ outcome }) => !outcome.ok,
        stateProvider: provider,
      })
      .build();
    expect(provider.lastHandledOutcome).toBeUndefined();
    await settle(pipeline.execute(fail));
    await pipeline.execute(ok);
    expect(provider.lastHandledOutcome).toEqual({ ok: false, error: down });
  });
});

describe('circuit breaker: answers of a custom store', () => {
  /** A store that answers every admission with `answer` (the rest as in memory). */
  class FixedAnswerStore extends InMemoryCircuitBreakerStateStore {
    constructor(private readonly answer: CircuitAcquireResult) {
      super();
    }
    override acquire(_key: string, _policy: CircuitPolicy, _now: number): CircuitAcquireResult {
      return this.answer;
    }
  }

  function onStore(answer: CircuitAcquireResult) {
    const events: ResilienceEvent[] = [];
    const pipeline = new ResiliencePipelineBuilder({
      name: 'custom',
      telemetryListeners: [{ write: (e) => void events.push(e) }],
    })
      .addCircuitBreaker({ stateStore: new FixedAnswerStore(answer), breakDuration: 750, waitForHalfOpenVerdict: true })
      .build();
    const rejected = () => events.filter((e) => e.eventName === 'OnCircuitRejected').map((e) => e.arguments);
    return { pipeline, rejected };
  }

  it('a rejection without retryAfter tells the caller to retry after the break duration', async () => {
    const { pipeline, rejected } = onStore({ state: 'open' });
    const error = (await settle(pipeline.execute(ok))) as BrokenCircuitError;
    expect(error).toBeInstanceOf(BrokenCircuitError);
    expect(error.retryAfter).toBe(750);
    expect(rejected()).toEqual([{ state: 'open', retryAfter: 750 }]);
  });

  it('a closed answer without a permit is a rejection, reported as open', async () => {
    const { pipeline, rejected } = onStore({ state: 'closed' });
    const error = (await settle(pipeline.execute(ok))) as BrokenCircuitError;
    expect(error.message).toBe('The circuit "custom/circuit-breaker" is open; it admits calls again in 750 ms.');
    expect(rejected()).toEqual([{ state: 'open', retryAfter: 750 }]);
  });

  it('a half-open answer without a verdict time is rejected at once, even when callers may wait', async () => {
    const { pipeline, rejected } = onStore({ state: 'half-open', retryAfter: 20 });
    const error = (await settle(pipeline.execute(ok))) as BrokenCircuitError;
    expect(error).toBeInstanceOf(BrokenCircuitError);
    expect(error.retryAfter).toBe(20);
    expect(rejected()).toEqual([{ state: 'half-open', retryAfter: 20 }]);
  });
});
