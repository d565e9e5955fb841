import { describe, expect, it } from '@jest/globals';
import {
  AdaptiveThrottlingRejectedError,
  AdaptiveThrottlingStateProvider,
  defaultAdaptiveThrottlingKey,
  InMemoryAdaptiveThrottlingStore,
  ResiliencePipelineBuilder,
  ResiliencePipelineRegistry,
  ResilienceValidationError,
  SystemTimeProvider,
  type AdaptiveThrottlingBucketCounts,
  type AdaptiveThrottlingStore,
  type AdaptiveThrottlingSyncRequest,
  type ResiliencePipeline,
} from '../../../src/core.entry.js';
import { FakeTimeProvider, flushPromises } from '../../../src/testing/index.js';
import { settle } from '../../utils/flaky.js';
import { RecordingListener } from '../../utils/recording.listener.js';
import { strategyProblems } from '../../utils/validation-problems.js';

const unavailable = () => Object.assign(new Error('Service Unavailable'), { status: 503 });
const START = 1_000_000;

/** A store that records every sync and can fail, hang, or lose what it holds (a Redis restarted empty). */
class ControlledStore implements AdaptiveThrottlingStore {
  readonly requests: AdaptiveThrottlingSyncRequest[] = [];
  mode: 'ok' | 'fail' | 'hang' = 'ok';
  private inner = new InMemoryAdaptiveThrottlingStore();
  private readonly hung: (() => void)[] = [];

  sync(request: AdaptiveThrottlingSyncRequest): Promise<readonly AdaptiveThrottlingBucketCounts[]> {
    this.requests.push(request);
    if (this.mode === 'fail') return Promise.reject(new Error('store down'));
    if (this.mode === 'hang') {
      return new Promise((resolve) => this.hung.push(() => void this.inner.sync(request).then(resolve)));
    }
    return this.inner.sync(request);
  }

  /** Answers the syncs left hanging. */
  release(): void {
    for (const answer of this.hung.splice(0)) answer();
  }

  /** Forgets everything. */
  wipe(): void {
    this.inner = new InMemoryAdaptiveThrottlingStore();
  }
}

function member(
  store: AdaptiveThrottlingStore,
  time: FakeTimeProvider,
  random: () => number,
  options: { window?: number; syncInterval?: number; instanceName?: string; name?: string } = {},
) {
  const listener = new RecordingListener();
  const stateProvider = new AdaptiveThrottlingStateProvider();
  const pipeline = new ResiliencePipelineBuilder({
    name: 'inventory',
    instanceName: options.instanceName,
    timeProvider: time,
    telemetryListeners: [listener],
    random,
  })
    .addAdaptiveThrottling({
      name: options.name,
      window: options.window ?? 20_000,
      stateProvider,
      fleet: { store, syncInterval: options.syncInterval },
    })
    .build();
  return { pipeline, stateProvider, listener, stats: () => stateProvider.statistics };
}

async function refuse(pipeline: ResiliencePipeline, count: number) {
  for (let i = 0; i < count; i++) await settle(pipeline.execute(() => Promise.reject(unavailable())));
}

async function accept(pipeline: ResiliencePipeline, count: number) {
  for (let i = 0; i < count; i++) await pipeline.execute(() => 'ok');
}

/** Moves the clock by `ms` and lets the syncs it started answer. */
async function sync(time: FakeTimeProvider, ms = 1_000) {
  time.advance(ms);
  await flushPromises();
}

const storeEvents = (listener: RecordingListener) =>
  listener.events.filter((e) => e.eventName.startsWith('OnStateStore')).map((e) => [e.eventName, e.severity]);

describe('adaptive throttling shared by a fleet', () => {
  it("rejects on the fleet's counts: another instance's refusals reach it with the next sync", async () => {
    const time = new FakeTimeProvider(START);
    const store = new InMemoryAdaptiveThrottlingStore();
    const a = member(store, time, () => 0.9999); // never draws under the probability: every call runs
    const b = member(store, time, () => 0.5);
    // Built, not used yet: no sync, the figures are the instance's own.
    expect(b.stats()).toEqual(expect.objectContaining({ requests: 0, shared: false }));
    await accept(a.pipeline, 1); // each instance's first call starts its syncing
    await accept(b.pipeline, 1);
    await flushPromises();
    expect(b.stats()).toEqual(expect.objectContaining({ requests: 1, accepts: 1, rejectProbability: 0, shared: true }));

    await refuse(a.pipeline, 10);
    // A counts its own calls at once; B learns of them with the next sync.
    expect(a.stats()).toEqual(expect.objectContaining({ requests: 11, accepts: 1 }));
    expect(b.stats().requests).toBe(1);
    await sync(time);
    expect(b.stats()).toEqual(expect.objectContaining({ requests: 12, accepts: 2, shared: true }));
    expect(b.stats().rejectProbability).toBeCloseTo((12 - 2 * 2) / 13, 12);

    let reached = false;
    const error = await settle(
      b.pipeline.execute(() => {
        reached = true;
        return 'ok';
      }),
    );
    expect(reached).toBe(false);
    expect(error).toBeInstanceOf(AdaptiveThrottlingRejectedError);
    expect(error).toMatchObject({ requests: 13, accepts: 2 });

    // Within the sync lag: A's next refusals are B's after one more sync. A synced first in that round,
    // before B sent its rejected call: A counts it one sync later.
    await refuse(a.pipeline, 5);
    expect(b.stats().requests).toBe(13);
    await sync(time);
    expect(b.stats().requests).toBe(18);
    expect(a.stats().requests).toBe(17);
    await sync(time);
    expect(a.stats().requests).toBe(18);
    // Accepts anywhere in the fleet lower everyone's probability.
    await accept(a.pipeline, 8);
    await sync(time);
    expect(b.stats()).toEqual(expect.objectContaining({ requests: 26, accepts: 10 }));
    expect(b.stats().rejectProbability).toBeCloseTo((26 - 20) / 27, 12);
    await a.pipeline.dispose();
    await b.pipeline.dispose();
  });

  it('forgets what left the window, fleet-wide', async () => {
    const time = new FakeTimeProvider(START);
    const store = new InMemoryAdaptiveThrottlingStore();
    const a = member(store, time, () => 0.9999);
    const b = member(store, time, () => 0.9999);
    await refuse(a.pipeline, 4); // A first: its timer runs first, so B reads what A sent in the same round
    await accept(b.pipeline, 1);
    await sync(time, 1_000);
    expect(b.stats().requests).toBe(5);
    // The window is 20 buckets of 1 s: the bucket of those calls leaves it 20 s after it started.
    for (let i = 0; i < 18; i++) await sync(time);
    expect(b.stats().requests).toBe(5);
    await sync(time);
    expect(b.stats().requests).toBe(0);
    expect(a.stats().requests).toBe(0);
    await a.pipeline.dispose();
    await b.pipeline.dispose();
  });

  it('syncs from its first call on, every syncInterval (default a tenth of the window, at most 1 s), sending running totals of the buckets that changed', async () => {
    const time = new FakeTimeProvider(START);
    const store = new ControlledStore();
    const short = member(store, time, () => 0.9999, { window: 5_000 });
    expect(time.pendingTimerCount).toBe(0); // built, never used: nothing synced
    await refuse(short.pipeline, 2);
    await accept(short.pipeline, 1);
    expect(time.pendingDelays).toEqual([500]);
    const long = member(new ControlledStore(), time, () => 0.9999, { window: 120_000 });
    await accept(long.pipeline, 1);
    expect(time.pendingDelays).toEqual([500, 1_000]);
    await long.pipeline.dispose();

    // The window of 5 s is 20 buckets of 250 ms, numbered by the time: bucket n is [250 n, 250 (n + 1)).
    const bucket = START / 250;
    expect(store.requests).toEqual([
      {
        key: 'inventory:adaptive-throttling',
        instance: expect.stringMatching(/^[0-9a-f-]{36}$/),
        firstBucket: bucket - 19,
        lastBucket: bucket,
        ttl: 5_250,
        counts: [],
      },
    ]);
    // The first sync went out with the first call, before it was counted.
    await sync(time, 500);
    expect(store.requests[1].counts).toEqual([{ bucket, requests: 3, accepts: 1 }]);
    expect(store.requests[1].firstBucket).toBe(bucket + 2 - 19);
    // Nothing new: nothing sent (the fleet's counts are still read).
    await sync(time, 500);
    expect(store.requests[2].counts).toEqual([]);
    await accept(short.pipeline, 2);
    await sync(time, 500);
    // Totals, not increments: the bucket now holds 2 requests and 2 accepts of this instance.
    expect(store.requests[3].counts).toEqual([{ bucket: bucket + 4, requests: 2, accepts: 2 }]);
    expect(new Set(store.requests.map((r) => r.instance)).size).toBe(1);
    await short.pipeline.dispose();
  });

  it('names the window after the pipeline, its instance key and the strategy, unless fleet.key says otherwise', async () => {
    expect(defaultAdaptiveThrottlingKey('inventory')).toBe('inventory:adaptive-throttling');
    expect(defaultAdaptiveThrottlingKey('rpc:inventory', 'eu%west', 'pricing')).toBe(
      'rpc%3Ainventory:eu%25west:pricing',
    );
    expect(defaultAdaptiveThrottlingKey('rpc', 'inventory')).not.toBe(defaultAdaptiveThrottlingKey('rpc:inventory'));
    const time = new FakeTimeProvider(START);
    const store = new ControlledStore();
    const keyed = member(store, time, () => 0.5, { instanceName: 'eu:west', name: 'pricing' });
    const pipeline = new ResiliencePipelineBuilder({ timeProvider: time })
      .addAdaptiveThrottling({ fleet: { store, key: 'orders' } })
      .build();
    await keyed.pipeline.execute(() => 'ok');
    await pipeline.execute(() => 'ok');
    expect(store.requests.map((r) => r.key)).toEqual(['inventory:eu%3Awest:pricing', 'orders']);
    await keyed.pipeline.dispose();
    await pipeline.dispose();
  });

  it('falls back to its own counts while the store fails, reports it once, and sends what it counted meanwhile when the store is back', async () => {
    const time = new FakeTimeProvider(START);
    const store = new ControlledStore();
    const a = member(store, time, () => 0.9999);
    const b = member(store, time, () => 0.9999);
    await refuse(a.pipeline, 10);
    await accept(b.pipeline, 1);
    await sync(time);
    expect(b.stats()).toEqual(expect.objectContaining({ requests: 11, accepts: 1, shared: true }));
    expect(b.stats().rejectProbability).toBeCloseTo(9 / 12, 12);

    store.mode = 'fail';
    await sync(time);
    // B decides on its own counts: its one call was accepted, so nothing is rejected.
    expect(b.stats()).toEqual(
      expect.objectContaining({ requests: 1, accepts: 1, rejectProbability: 0, shared: false }),
    );
    expect(a.stats()).toEqual(expect.objectContaining({ requests: 10, shared: false }));
    await accept(b.pipeline, 3);
    await refuse(a.pipeline, 2);
    for (let i = 0; i < 3; i++) await sync(time); // more failed syncs: still one report per outage
    expect(storeEvents(b.listener)).toEqual([['OnStateStoreUnavailable', 'error']]);
    expect(b.listener.events.find((e) => e.eventName === 'OnStateStoreUnavailable')?.arguments).toEqual({
      error: new Error('store down'),
    });
    expect(b.stats()).toEqual(expect.objectContaining({ requests: 4, accepts: 4 }));

    store.mode = 'ok';
    await sync(time);
    expect(storeEvents(b.listener)).toEqual([
      ['OnStateStoreUnavailable', 'error'],
      ['OnStateStoreRestored', 'information'],
    ]);
    // A synced first: B sees everything counted during the outage, A sees B's with the next sync.
    expect(b.stats()).toEqual(expect.objectContaining({ requests: 16, accepts: 4, shared: true }));
    await sync(time);
    expect(a.stats()).toEqual(expect.objectContaining({ requests: 16, accepts: 4, shared: true }));
    await a.pipeline.dispose();
    await b.pipeline.dispose();
  });

  it('never waits for the store: a sync left unanswered for two intervals counts as an outage until it answers', async () => {
    const time = new FakeTimeProvider(START);
    const store = new ControlledStore();
    const a = member(store, time, () => 0.9999);
    await refuse(a.pipeline, 4);
    await sync(time);
    store.mode = 'hang';
    await sync(time); // a sync starts and hangs
    expect(a.stats().shared).toBe(true);
    // Calls go on without the store (the fake clock does not move while they run).
    await refuse(a.pipeline, 2);
    await accept(a.pipeline, 1);
    expect(a.stats()).toEqual(expect.objectContaining({ requests: 7, accepts: 1 }));
    const before = store.requests.length;
    await sync(time); // one interval without an answer: no second sync, the last view still decides
    expect(store.requests).toHaveLength(before);
    expect(a.stats().shared).toBe(true);
    await sync(time); // two: own counts decide
    expect(store.requests).toHaveLength(before);
    expect(a.stats()).toEqual(expect.objectContaining({ requests: 7, accepts: 1, shared: false }));
    expect(storeEvents(a.listener)).toEqual([['OnStateStoreUnavailable', 'error']]);
    const unavailableError = a.listener.events.find((e) => e.eventName === 'OnStateStoreUnavailable')?.arguments;
    expect(unavailableError).toEqual({ error: new Error('no answer from the store within 2000 ms') });

    store.mode = 'ok';
    store.release();
    await flushPromises();
    expect(a.stats().shared).toBe(true);
    expect(storeEvents(a.listener)).toEqual([
      ['OnStateStoreUnavailable', 'error'],
      ['OnStateStoreRestored', 'information'],
    ]);
    expect(a.stats()).toEqual(expect.objectContaining({ requests: 7, accepts: 1 }));
    await sync(time);
    expect(a.stats()).toEqual(expect.objectContaining({ requests: 7, accepts: 1, shared: true }));
    await a.pipeline.dispose();
  });

  it('decides on its own counts until its first sync answers', async () => {
    const time = new FakeTimeProvider(START);
    const store = new ControlledStore();
    const a = member(store, time, () => 0.9999);
    await refuse(a.pipeline, 9);
    await sync(time);
    store.mode = 'hang';
    const b = member(store, time, () => 0.5);
    await refuse(b.pipeline, 1); // its first call: a sync goes out (and hangs)
    expect(store.requests.at(-1)?.instance).not.toBe(store.requests[0].instance);
    expect(b.stats()).toEqual(expect.objectContaining({ requests: 1, accepts: 0, shared: false }));
    // Its own counts say (1 − 0) / 2: a draw of 0.5 is not under it, the call runs.
    await expect(b.pipeline.execute(() => 'ok')).resolves.toBe('ok');
    store.mode = 'ok';
    store.release();
    await flushPromises();
    expect(b.stats()).toEqual(expect.objectContaining({ requests: 11, accepts: 1, shared: true }));
    // The first answer starts sharing: nothing is reported.
    expect(storeEvents(b.listener)).toEqual([]);
    await a.pipeline.dispose();
    await b.pipeline.dispose();
  });

  it('sends its counts again when the store lost them (a Redis restarted empty)', async () => {
    const time = new FakeTimeProvider(START);
    const store = new ControlledStore();
    const a = member(store, time, () => 0.9999);
    const b = member(store, time, () => 0.9999);
    await refuse(a.pipeline, 6);
    await accept(b.pipeline, 1);
    await sync(time);
    expect(b.stats().requests).toBe(7);
    store.wipe();
    await sync(time); // each finds less than it sent: it counts from memory, and sends it again next time
    expect(a.stats().requests).toBe(6);
    expect(b.stats().requests).toBe(1);
    await sync(time);
    expect(b.stats().requests).toBe(7);
    await a.pipeline.dispose();
    await b.pipeline.dispose();
  });

  it('stops its timer on dispose, after sending the counts the store does not have yet', async () => {
    const time = new FakeTimeProvider(START);
    const store = new ControlledStore();
    const a = member(store, time, () => 0.9999);
    await refuse(a.pipeline, 3);
    expect(time.pendingTimerCount).toBe(1);
    await a.pipeline.dispose();
    expect(time.pendingTimerCount).toBe(0);
    expect(store.requests.at(-1)?.counts).toEqual([{ bucket: START / 1_000, requests: 3, accepts: 0 }]);
    const count = store.requests.length;
    time.advance(10_000);
    await flushPromises();
    expect(store.requests).toHaveLength(count);
    const fresh = member(store, time, () => 0.9999);
    await accept(fresh.pipeline, 1);
    await flushPromises();
    expect(fresh.stats()).toEqual(expect.objectContaining({ requests: 4, accepts: 1 }));
    await fresh.pipeline.dispose();
  });

  it('unrefs its timer: it never keeps the process alive', async () => {
    const unref: unknown[] = [];
    const cleared: unknown[] = [];
    const time = new (class extends SystemTimeProvider {
      override setTimeout(callback: () => void, delay: number) {
        const handle = { delay, unref: () => void unref.push(handle) };
        return handle;
      }
      override clearTimeout(handle: unknown) {
        cleared.push(handle);
      }
    })();
    const pipeline = new ResiliencePipelineBuilder({ name: 'p', timeProvider: time })
      .addAdaptiveThrottling({ fleet: { store: new InMemoryAdaptiveThrottlingStore(), syncInterval: 250 } })
      .build();
    expect(unref).toEqual([]);
    await pipeline.execute(() => 'ok');
    expect(unref).toEqual([{ delay: 250, unref: expect.any(Function) }]);
    await pipeline.dispose();
    expect(cleared).toEqual(unref);
  });

  it('validates fleet at build, every problem at once', () => {
    const store = new InMemoryAdaptiveThrottlingStore();
    const problems = (fleet: unknown, extra: object = {}) =>
      strategyProblems('adaptive-throttling', (b) => b.addAdaptiveThrottling({ fleet, ...extra } as never));
    const needsStore =
      'needs a store the instances share the window through (the module option store: { redis }, or fleet.store)';
    expect(problems(true)).toEqual([{ path: 'fleet', rule: needsStore }]);
    expect(problems({ key: 'k' })).toEqual([{ path: 'fleet', rule: needsStore }]);
    expect(problems('yes')).toEqual([
      { path: 'fleet', rule: 'must be true, false or an object of fleet options ({ store, key, syncInterval })' },
    ]);
    expect(problems({ store: {}, syncInterval: 0, extra: 1 }).map((p) => p.path)).toEqual([
      'fleet.extra',
      'fleet.store',
      'fleet.syncInterval',
      'fleet.key',
    ]);
    expect(problems({ store, key: 'k', syncInterval: 3_000 }, { window: 2_000 })).toEqual([
      { path: 'fleet.syncInterval', rule: 'must be <= window (2000)' },
    ]);
    expect(problems({ store })).toEqual([{ path: 'fleet.key', rule: 'is required when the pipeline has no name' }]);
    expect(problems({ store, key: 'k', syncInterval: 2_000 }, { window: 2_000 })).toEqual([]);
    expect(problems(false)).toEqual([]);
  });
});

describe('InMemoryAdaptiveThrottlingStore', () => {
  it("sums every instance's totals per bucket; a sync repeated or late counts once; what left the window is dropped", async () => {
    const store = new InMemoryAdaptiveThrottlingStore();
    const at = (overrides: Partial<AdaptiveThrottlingSyncRequest>): AdaptiveThrottlingSyncRequest => ({
      key: 'k',
      instance: 'a',
      firstBucket: 81,
      lastBucket: 100,
      ttl: 21_000,
      counts: [],
      ...overrides,
    });
    await store.sync(at({ counts: [{ bucket: 90, requests: 4, accepts: 2 }] }));
    const sent = at({ instance: 'b', counts: [{ bucket: 90, requests: 3, accepts: 3 }] });
    await store.sync(sent);
    expect(await store.sync(sent)).toEqual([{ bucket: 90, requests: 7, accepts: 5 }]);
    await store.sync(at({ instance: 'b', counts: [{ bucket: 90, requests: 5, accepts: 3 }] }));
    expect(await store.sync(at({ instance: 'b', counts: [{ bucket: 90, requests: 4, accepts: 3 }] }))).toEqual([
      { bucket: 90, requests: 9, accepts: 5 },
    ]);
    expect(await store.sync(at({ key: 'other' }))).toEqual([]);
    const moved = await store.sync(
      at({
        firstBucket: 91,
        lastBucket: 110,
        counts: [
          { bucket: 90, requests: 9, accepts: 9 },
          { bucket: 111, requests: 9, accepts: 9 },
          { bucket: 110, requests: 1, accepts: 0 },
        ],
      }),
    );
    expect(moved).toEqual([{ bucket: 110, requests: 1, accepts: 0 }]);
  });
});

describe('the adaptiveThrottling section with fleet', () => {
  it("shares the window through the registry's store: true, or { syncInterval, key }, strings read", async () => {
    const time = new FakeTimeProvider(START);
    const store = new ControlledStore();
    const registry = new ResiliencePipelineRegistry({
      timeProvider: time,
      adaptiveThrottlingStore: store,
      pipelines: {
        p: { adaptiveThrottling: { fleet: true } },
        q: { adaptiveThrottling: { window: '10s', fleet: { syncInterval: '500ms', key: 'shared-q' } } },
        r: { adaptiveThrottling: { fleet: 'true' as never } },
        off: { adaptiveThrottling: { fleet: 'false' as never } },
      },
    });
    // Validation built each pipeline once already: nothing synced until a pipeline is used.
    expect(store.requests).toEqual([]);
    for (const [name, key] of [['p'], ['p', 'eu'], ['q'], ['r'], ['off']]) {
      await registry.getPipeline(name, key).execute(() => 'ok');
    }
    await flushPromises();
    expect(store.requests.map((r) => r.key)).toEqual([
      'p:adaptive-throttling',
      'p:eu:adaptive-throttling',
      'shared-q',
      'r:adaptive-throttling',
    ]);
    store.requests.length = 0;
    await sync(time, 500);
    expect(store.requests.map((r) => r.key)).toEqual(['shared-q']);

    await settle(registry.getPipeline('p').execute(() => Promise.reject(unavailable())));
    await settle(registry.getPipeline('p').execute(() => Promise.reject(unavailable())));
    const throttles = registry.limiterStatistics().filter((l) => l.section === 'adaptiveThrottling');
    expect(throttles.find((l) => l.pipelineName === 'p' && l.instanceKey === undefined)).toEqual(
      expect.objectContaining({
        distributed: true,
        // (3 − 2 × 1) / (3 + 1)
        throttle: { requests: 3, accepts: 1, rejectProbability: 0.25, k: 2, window: 120_000, shared: true },
      }),
    );
    expect(throttles.find((l) => l.pipelineName === 'off')).toEqual(
      expect.objectContaining({
        distributed: false,
        throttle: { requests: 1, accepts: 1, rejectProbability: 0, k: 2, window: 120_000 },
      }),
    );
    await registry.dispose();
    expect(time.pendingTimerCount).toBe(0);
  });

  it('without a store, fails with every problem listed, each with its path', () => {
    let error: unknown;
    try {
      new ResiliencePipelineRegistry({
        pipelines: {
          p: { adaptiveThrottling: { k: 0.5, fleet: true } },
          q: { adaptiveThrottling: { window: '2s', fleet: { syncInterval: '5s' } } },
        },
      });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ResilienceValidationError);
    const issues = (error as ResilienceValidationError).issues.map((i) => `${i.path}: ${i.rule}`);
    expect(issues).toEqual([
      'pipelines.p.adaptiveThrottling.k: must be a number >= 1',
      'pipelines.p.adaptiveThrottling.fleet: needs a store the instances share the window through (the module option store: { redis }, or fleet.store)',
      'pipelines.q.adaptiveThrottling.fleet: needs a store the instances share the window through (the module option store: { redis }, or fleet.store)',
      'pipelines.q.adaptiveThrottling.fleet.syncInterval: must be <= window (2000)',
    ]);
    expect((error as Error).message).toMatch(/^Invalid resilience configuration \(4 problems\)/);
  });

  it('takes a store given in the section itself (configuration built in code)', async () => {
    const time = new FakeTimeProvider(START);
    const store = new ControlledStore();
    const registry = new ResiliencePipelineRegistry({
      timeProvider: time,
      pipelines: { p: { adaptiveThrottling: { fleet: { store } } } },
    });
    await registry.getPipeline('p').execute(() => 'ok');
    await flushPromises();
    expect(store.requests.map((r) => r.key)).toEqual(['p:adaptive-throttling']);
    await registry.dispose();
  });
});
