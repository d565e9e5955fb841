import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import {
  InMemoryCircuitBreakerStateStore,
  ResilienceContext,
  ResiliencePipelineBuilder,
  type CircuitCallResult,
  type CircuitPermit,
  type CircuitPolicy,
  type CircuitBreakerStateStore,
  type CircuitSnapshot,
  resilienceEventOutcome,
  type ResilienceEvent,
} from '../../../src/core.entry.js';
import { nextTurn } from '../../utils/flaky.js';

/**
 * A store of one's own (the in-memory one underneath) whose recording can be made to throw or reject; a
 * store that rejects answers asynchronously when it works.
 */
class FaultyRecordStore implements CircuitBreakerStateStore {
  fault: 'none' | 'throw' | 'reject' = 'none';
  constructor(private readonly async: boolean) {}
  readonly storeError = new Error('store down');
  private readonly inner = new InMemoryCircuitBreakerStateStore();

  acquire(key: string, policy: CircuitPolicy, now: number) {
    return this.inner.acquire(key, policy, now);
  }
  record(key: string, policy: CircuitPolicy, permit: CircuitPermit, result: CircuitCallResult, now: number) {
    if (this.fault === 'throw') throw this.storeError;
    if (this.fault === 'reject') return Promise.reject(this.storeError);
    const transition = this.inner.record(key, policy, permit, result, now);
    return this.async ? Promise.resolve(transition) : transition;
  }
  isolate(key: string, policy: CircuitPolicy, now: number) {
    return this.inner.isolate(key, policy, now);
  }
  close(key: string, policy: CircuitPolicy, now: number) {
    return this.inner.close(key, policy, now);
  }
  exportSnapshot(key: string, policy: CircuitPolicy): CircuitSnapshot {
    return this.inner.exportSnapshot(key, policy);
  }
  importSnapshot(key: string, policy: CircuitPolicy, snapshot: CircuitSnapshot): void {
    this.inner.importSnapshot(key, policy, snapshot);
  }
}

const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
beforeEach(() => void process.on('unhandledRejection', onUnhandled));
afterEach(() => {
  process.off('unhandledRejection', onUnhandled);
  unhandled.length = 0;
});

function setup(fault: 'throw' | 'reject', inline: boolean, handleResults = false) {
  const store = new FaultyRecordStore(fault === 'reject');
  const events: ResilienceEvent[] = [];
  const builder = new ResiliencePipelineBuilder<string>({
    name: 'orders',
    telemetryListeners: [{ write: (e) => void events.push(e) }],
  });
  // A retry next to the breaker makes the pipeline run it inline.
  if (inline) builder.addRetry({ maxRetryAttempts: 0 });
  const pipeline = builder
    .addCircuitBreaker({
      stateStore: store,
      kind: 'consecutive',
      failureThreshold: 2,
      shouldHandle: handleResults ? ({ outcome }) => !outcome.ok || outcome.value === 'bad' : undefined,
    })
    .build();
  const storeEvents = () =>
    events
      .filter((e) => e.eventName === 'OnStateStoreUnavailable' || e.eventName === 'OnStateStoreRestored')
      .map((e) => [e.eventName, e.severity, (e.arguments as { error: unknown }).error]);
  const storeEventObjects = () =>
    events.filter((e) => e.eventName === 'OnStateStoreUnavailable' || e.eventName === 'OnStateStoreRestored');
  return { pipeline, store, storeEvents, storeEventObjects };
}

const cases = [
  ['throws', 'throw', false],
  ['rejects', 'reject', false],
  ['throws (inline)', 'throw', true],
  ['rejects (inline)', 'reject', true],
] as const;

describe.each(cases)('a custom store whose record %s', (_, fault, inline) => {
  it('leaves every call its own outcome: the caller never sees the store error in place of its own', async () => {
    const { pipeline, store } = setup(fault, inline);
    store.fault = fault;
    const own = new Error('own failure');
    await expect(pipeline.execute(async () => 'ok')).resolves.toBe('ok');
    await expect(
      pipeline.execute(async () => {
        throw own;
      }),
    ).rejects.toBe(own);
    await nextTurn();
    expect(unhandled).toEqual([]);
  });

  it('leaves a classified result (a predicate that reads results) its value', async () => {
    const { pipeline, store } = setup(fault, inline, true);
    store.fault = fault;
    await expect(pipeline.execute(async () => 'bad')).resolves.toBe('bad');
    await expect(pipeline.execute(async () => 'fine')).resolves.toBe('fine');
  });

  it('reports the first failure of a burst and the first success after it, once each', async () => {
    const { pipeline, store, storeEvents, storeEventObjects } = setup(fault, inline);
    const fail = () => pipeline.execute(async () => Promise.reject(new Error('x'))).catch(() => undefined);
    store.fault = fault;
    await fail();
    await pipeline.execute(async () => 'ok');
    await fail();
    await nextTurn();
    expect(storeEvents()).toEqual([['OnStateStoreUnavailable', 'error', store.storeError]]);
    store.fault = 'none';
    await pipeline.execute(async () => 'ok');
    await nextTurn();
    await pipeline.execute(async () => 'ok');
    await nextTurn();
    await fail();
    expect(storeEvents()).toEqual([
      ['OnStateStoreUnavailable', 'error', store.storeError],
      ['OnStateStoreRestored', 'information', undefined],
    ]);
    // What log lines and the event stream print as the outcome: the store's error, and none once it is back.
    expect(storeEventObjects().map((e) => resilienceEventOutcome(e.eventName, e.arguments))).toEqual([
      { ok: false, error: store.storeError },
      undefined,
    ]);
    store.fault = fault;
    await fail();
    expect(storeEvents()).toHaveLength(3);
    expect(storeEvents()[2]).toEqual(['OnStateStoreUnavailable', 'error', store.storeError]);
  });

  it.each([
    [
      'a success',
      async (p: { execute: (fn: () => Promise<string>) => Promise<string> }) => p.execute(async () => 'ok'),
    ],
    [
      'a failure',
      async (p: { execute: (fn: () => Promise<string>) => Promise<string> }) =>
        p.execute(async () => Promise.reject(new Error('x'))).catch(() => 'failed'),
    ],
  ])('reports the restoration with the first record that works, here of %s', async (_what, call) => {
    const { pipeline, store, storeEvents } = setup(fault, inline);
    store.fault = fault;
    await pipeline.execute(async () => Promise.reject(new Error('x'))).catch(() => undefined);
    await nextTurn();
    store.fault = 'none';
    await call(pipeline);
    await nextTurn();
    expect(storeEvents()).toEqual([
      ['OnStateStoreUnavailable', 'error', store.storeError],
      ['OnStateStoreRestored', 'information', undefined],
    ]);
  });

  it("gives the events the call's context when its outcome went unrecorded or recorded again", async () => {
    const { pipeline, store, storeEventObjects } = setup(fault, inline);
    const contexts: unknown[] = [];
    const failWithContext = () =>
      pipeline
        .execute(async (context) => {
          contexts.push(context);
          throw new Error('x');
        })
        .catch(() => undefined);
    store.fault = fault;
    await failWithContext();
    store.fault = 'none';
    await failWithContext();
    const [unavailable, restored] = storeEventObjects();
    expect(unavailable.context).toBe(contexts[0]);
    expect(restored.context).toBe(contexts[1]);
    // The same shape as the shared stores' events: an `error` key, here without an error.
    expect(restored.arguments).toStrictEqual({ error: undefined });
  });

  it('gives the events a context of their own for a success (the closed path keeps none)', async () => {
    const { pipeline, store, storeEventObjects } = setup(fault, inline);
    store.fault = fault;
    await pipeline.execute(async () => 'ok');
    await nextTurn();
    store.fault = 'none';
    await pipeline.execute(async () => 'ok');
    await nextTurn();
    const events = storeEventObjects();
    expect(events.map((e) => e.eventName)).toEqual(['OnStateStoreUnavailable', 'OnStateStoreRestored']);
    for (const event of events) expect(event.context).toBeInstanceOf(ResilienceContext);
  });

  it('reports a store that fails to record successes alone, once', async () => {
    const { pipeline, store, storeEvents } = setup(fault, inline);
    store.fault = fault;
    for (let i = 0; i < 3; i++) await expect(pipeline.execute(async () => 'ok')).resolves.toBe('ok');
    await nextTurn();
    expect(storeEvents()).toEqual([['OnStateStoreUnavailable', 'error', store.storeError]]);
    expect(unhandled).toEqual([]);
  });

  it('records nothing meanwhile: failures it could not record do not open the circuit', async () => {
    const { pipeline, store } = setup(fault, inline);
    store.fault = fault;
    for (let i = 0; i < 3; i++) await pipeline.execute(async () => Promise.reject(new Error('x'))).catch(() => 0);
    store.fault = 'none';
    await expect(pipeline.execute(async () => 'ok')).resolves.toBe('ok');
  });
});
