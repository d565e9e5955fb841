import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import type { Redis } from 'ioredis';
import { toCircuitPolicy } from '../../src/core/circuit-breaker/circuit-breaker.strategy.js';
import {
  InMemoryCircuitBreakerStateStore,
  type CircuitPermit,
  type CircuitPolicy,
  type CircuitSnapshot,
} from '../../src/core.entry.js';
import { RedisCircuitBreakerStateStore } from '../../src/redis/index.js';
import { commandArb, configArb, runScenario } from '../contracts/circuit-breaker.contract.js';
import { FakeTimeProvider } from '../../src/testing/index.js';
import { ready, redisClient, uniquePrefix } from './redis-test.utils.js';

/** A generous operation timeout: these tests are about decisions, not how fast a loaded machine answers. */
const SLACK = 5_000;

describe('Redis circuit-breaker state store', () => {
  const clients: Redis[] = [];
  const client = () => {
    const c = redisClient();
    clients.push(c);
    return c;
  };

  beforeAll(async () => {
    await ready(client());
  });

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.quit().catch(() => undefined)));
  });

  describe('against the reference model (the same contract as the in-memory store)', () => {
    for (const kind of ['consecutive', 'time-window', 'count-window', 'slow-call'] as const) {
      it(`agrees with the model for the ${kind} breaker`, async () => {
        const keyPrefix = uniquePrefix(kind);
        let run = 0;
        await fc.assert(
          fc.asyncProperty(configArb(kind), fc.array(commandArb, { minLength: 1, maxLength: 40 }), (config, commands) =>
            runScenario(
              config,
              commands,
              (timeProvider) =>
                new RedisCircuitBreakerStateStore({
                  client: clients[0],
                  keyPrefix,
                  timeProvider,
                  operationTimeout: SLACK,
                }),
              `circuit-${++run}`,
            ),
          ),
          { numRuns: 40 },
        );
      });
    }
  });

  describe('answer for answer, as the in-memory store does (the store API itself)', () => {
    type StoreCommand =
      | { type: 'acquire' }
      | { type: 'record'; index: number; result: 'success' | 'failure' | 'ignored' }
      | { type: 'advance'; ms: number }
      | { type: 'isolate' }
      | { type: 'close' };
    const storeCommandArb: fc.Arbitrary<StoreCommand> = fc.oneof(
      { weight: 4, arbitrary: fc.constant({ type: 'acquire' as const }) },
      {
        weight: 4,
        arbitrary: fc.record({
          type: fc.constant('record' as const),
          index: fc.nat(4),
          result: fc.constantFrom('success' as const, 'failure' as const, 'failure' as const, 'ignored' as const),
        }),
      },
      {
        weight: 2,
        arbitrary: fc.record({ type: fc.constant('advance' as const), ms: fc.constantFrom(1, 10, 49, 50, 100, 250) }),
      },
      { weight: 1, arbitrary: fc.constant({ type: 'isolate' as const }) },
      { weight: 1, arbitrary: fc.constant({ type: 'close' as const }) },
    );

    for (const kind of ['consecutive', 'time-window', 'count-window'] as const) {
      it(`gives the same decisions, transitions and snapshots for the ${kind} breaker`, async () => {
        const keyPrefix = uniquePrefix(`answers-${kind}`);
        let run = 0;
        await fc.assert(
          fc.asyncProperty(
            configArb(kind),
            fc.boolean(),
            fc.array(storeCommandArb, { minLength: 1, maxLength: 40 }),
            async ({ slowCallDuration: _, ...config }, generated, commands) => {
              const policy = toCircuitPolicy({
                ...config,
                breakDurationGenerator: generated
                  ? ({ halfOpenAttempts, failureCount }) => 30 * (halfOpenAttempts + 1) + failureCount
                  : undefined,
              });
              const key = `circuit-${++run}`;
              const time = new FakeTimeProvider(1_000_000);
              const redis = new RedisCircuitBreakerStateStore({
                client: clients[0],
                keyPrefix,
                timeProvider: time,
                operationTimeout: SLACK,
              });
              const memory = new InMemoryCircuitBreakerStateStore();
              const held: [CircuitPermit, CircuitPermit][] = [];
              for (const [step, command] of commands.entries()) {
                const where = `step ${step} ${JSON.stringify(command)}`;
                const now = time.now();
                let answers: [unknown, unknown] | undefined;
                switch (command.type) {
                  case 'acquire': {
                    const [inRedis, inMemory] = [
                      await redis.acquire(key, policy, now),
                      memory.acquire(key, policy, now),
                    ];
                    if (inRedis.permit && inMemory.permit) held.push([inRedis.permit, inMemory.permit]);
                    answers = [inRedis, inMemory];
                    break;
                  }
                  case 'record': {
                    if (held.length === 0) break;
                    const [[inRedis, inMemory]] = held.splice(command.index % held.length, 1);
                    answers = [
                      await redis.record(key, policy, inRedis, command.result, now),
                      memory.record(key, policy, inMemory, command.result, now),
                    ];
                    break;
                  }
                  case 'advance':
                    time.advance(command.ms);
                    break;
                  case 'isolate':
                    answers = [await redis.isolate(key, policy, now), memory.isolate(key, policy, now)];
                    break;
                  case 'close':
                    answers = [await redis.close(key, policy, now), memory.close(key, policy, now)];
                    break;
                }
                if (answers) expect({ where, answer: answers[0] }).toEqual({ where, answer: answers[1] });
              }
              await redis.flush();
              // Redis drops the buckets that left the window when it exports; memory keeps them until its next call.
              const comparable = ({ metrics, ...rest }: CircuitSnapshot) =>
                metrics.kind === 'time-window' ? rest : { ...rest, metrics };
              expect(comparable(await redis.exportSnapshot(key, policy))).toEqual(
                comparable(memory.exportSnapshot(key, policy)),
              );
            },
          ),
          { numRuns: 30 },
        );
      });
    }
  });

  it('refuses a call while every probe is out with the time their verdict is due, as in memory', async () => {
    const policy = toCircuitPolicy({
      kind: 'consecutive',
      failureThreshold: 1,
      breakDuration: 1_000,
      permittedCallsInHalfOpen: 2,
      maxHalfOpenWait: 5_000,
    });
    const redis = new RedisCircuitBreakerStateStore({
      client: clients[0],
      keyPrefix: uniquePrefix('verdict'),
      operationTimeout: SLACK,
    });
    const memory = new InMemoryCircuitBreakerStateStore();
    for (const store of [redis, memory]) {
      const { permit } = await store.acquire('k', policy, 10_000);
      await store.record('k', policy, permit!, 'failure', 10_000);
    }
    const answers = async (store: RedisCircuitBreakerStateStore | InMemoryCircuitBreakerStateStore) => [
      await store.acquire('k', policy, 11_000), // the break is over: the first probe
      await store.acquire('k', policy, 11_500), // the second
      await store.acquire('k', policy, 12_000), // both are out
    ];
    const inRedis = await answers(redis);
    expect(inRedis).toEqual(await answers(memory));
    expect(inRedis[2]).toEqual({ state: 'half-open', retryAfter: 1_000, verdictDueAt: 16_000 });
  });

  it('hands out exactly permittedCallsInHalfOpen probes across many stores (processes) at once', async () => {
    const prefix = uniquePrefix('probes');
    const stores = Array.from(
      { length: 5 },
      () => new RedisCircuitBreakerStateStore({ client: client(), keyPrefix: prefix, operationTimeout: SLACK }),
    );
    await Promise.all(clients.map((c) => ready(c)));
    const policy = toCircuitPolicy({
      kind: 'consecutive',
      failureThreshold: 1,
      breakDuration: 1_000,
      permittedCallsInHalfOpen: 3,
    });
    const first = await stores[0].acquire('k', policy, 0);
    await stores[0].record('k', policy, first.permit!, 'failure', 0);
    const decisions = await Promise.all(
      Array.from({ length: 200 }, (_, i) => Promise.resolve(stores[i % stores.length].acquire('k', policy, 1_000))),
    );
    expect(decisions.filter((d) => d.permit?.probe)).toHaveLength(3);
    const rejected = decisions.filter((d) => !d.permit);
    expect(rejected).toHaveLength(197);
    expect(rejected.every((d) => d.retryAfter! > 0)).toBe(true);
    expect(decisions.filter((d) => d.transition?.to === 'half-open')).toHaveLength(1);
  });

  it('keeps each circuit in one key under the application prefix, hash-tagged, with an expiry', async () => {
    const prefix = uniquePrefix('keys');
    const c = clients[0];
    const store = new RedisCircuitBreakerStateStore({ client: c, keyPrefix: prefix, operationTimeout: SLACK });
    const policy = toCircuitPolicy({
      kind: 'count-window',
      windowSize: 5,
      minimumThroughput: 1,
      failureRatio: 1,
      breakDuration: 10_000,
    });
    const { permit } = await store.acquire('orders/circuit-breaker', policy, Date.now());
    await store.record('orders/circuit-breaker', policy, permit!, 'failure', Date.now());
    const keys = (await c.keys(`${prefix}:*`)).sort();
    expect(keys).toEqual([`${prefix}:cb:{orders/circuit-breaker}`]);
    for (const key of keys) expect(await c.pttl(key)).toBeGreaterThan(10_000);
  });

  it('gives every circuit key an expiry: a minute at least, twice the sampling duration, and an open circuit its break on top', async () => {
    const prefix = uniquePrefix('expiry');
    const c = clients[0];
    const store = new RedisCircuitBreakerStateStore({ client: c, keyPrefix: prefix, operationTimeout: SLACK });
    const now = 1_000_000;
    /** One failure (the circuit is written), then the key's time to live. */
    const failOnce = async (key: string, policy: CircuitPolicy): Promise<number> => {
      const { permit } = await store.acquire(key, policy, now);
      await store.record(key, policy, permit!, 'failure', now);
      return c.pttl(store.keyFor(key));
    };
    const within = (ttl: number, expected: number) => {
      expect(ttl).toBeGreaterThan(expected - 5_000);
      expect(ttl).toBeLessThanOrEqual(expected);
    };
    const closedOnly = { failureThreshold: 3, minimumThroughput: 100, breakDuration: 1_000, maxHalfOpenWait: 500 };
    within(await failOnce('short', toCircuitPolicy({ kind: 'consecutive', ...closedOnly })), 60_000);
    within(
      await failOnce('sampled', toCircuitPolicy({ kind: 'time-window', samplingDuration: 100_000, ...closedOnly })),
      200_000,
    );
    within(
      await failOnce('slow', toCircuitPolicy({ kind: 'slow-call', samplingDuration: 40_000, ...closedOnly })),
      80_000,
    );
    // Closed: twice the break plus the half-open wait (here above a minute); open: the rest of the break on top.
    const long = toCircuitPolicy({
      kind: 'consecutive',
      failureThreshold: 2,
      breakDuration: 50_000,
      maxHalfOpenWait: 10_000,
    });
    within(await failOnce('long', long), 110_000);
    within(await failOnce('long', long), 170_000);
  });

  it("names keys under the working directory's package name by default (this repository's: nest-resilience)", () => {
    const store = new RedisCircuitBreakerStateStore({ client: clients[0] });
    expect(store.keyFor('orders/circuit-breaker')).toBe('nest-resilience:cb:{orders/circuit-breaker}');
  });

  it('sends closed-path successes with the next call: one script call per call', async () => {
    const c = clients[0];
    const store = new RedisCircuitBreakerStateStore({
      client: c,
      keyPrefix: uniquePrefix('rtt'),
      operationTimeout: SLACK,
    });
    const policy = toCircuitPolicy({
      kind: 'time-window',
      samplingDuration: 10_000,
      minimumThroughput: 5,
      failureRatio: 0.5,
    });
    let scripts = 0;
    const original = (c as unknown as { nestResilienceCircuit: (...a: unknown[]) => Promise<unknown> })
      .nestResilienceCircuit;
    (c as unknown as { nestResilienceCircuit: unknown }).nestResilienceCircuit = (...a: unknown[]) => {
      scripts++;
      return original.apply(c, a);
    };
    try {
      const t0 = Date.now();
      for (let i = 0; i < 20; i++) {
        const { permit } = await store.acquire('k', policy, t0 + i);
        expect(store.record('k', policy, permit!, 'success', t0 + i)).toBeUndefined();
      }
      expect(scripts).toBe(20);
      const snapshot = await store.exportSnapshot('k', policy);
      expect(snapshot.metrics.kind === 'time-window' && snapshot.metrics.windows.reduce((n, w) => n + w[1], 0)).toBe(
        20,
      );
    } finally {
      (c as unknown as { nestResilienceCircuit: unknown }).nestResilienceCircuit = original;
    }
  });

  it.each([
    ['flushInterval (default 100 ms)', {}, 100],
    ['flushInterval', { flushInterval: 250 }, 250],
    ['localCacheTtl when it is longer', { flushInterval: 100, localCacheTtl: 400 }, 400],
  ])('sends the successes no later call carried after %s, on its clock', async (_, options, after) => {
    const prefix = uniquePrefix('flush');
    const time = new FakeTimeProvider(Date.now());
    const store = new RedisCircuitBreakerStateStore({
      client: clients[0],
      keyPrefix: prefix,
      operationTimeout: SLACK,
      timeProvider: time,
      ...options,
    });
    const view = new RedisCircuitBreakerStateStore({
      client: clients[0],
      keyPrefix: prefix,
      operationTimeout: SLACK,
      timeProvider: time,
    });
    const policy = toCircuitPolicy({ kind: 'time-window', samplingDuration: 60_000, minimumThroughput: 100 });
    const successes = async () => {
      const { metrics } = await view.exportSnapshot('k', policy);
      return metrics.kind === 'time-window' ? metrics.windows.reduce((n, [, ok]) => n + ok, 0) : -1;
    };
    const permits = [];
    for (let i = 0; i < 3; i++) permits.push((await store.acquire('k', policy, time.now())).permit!);
    for (const permit of permits) expect(store.record('k', policy, permit, 'success', time.now())).toBeUndefined();
    time.advance(after - 1);
    await new Promise((resolve) => setTimeout(resolve, 50)); // a flush would have reached Redis by now
    expect(await successes()).toBe(0);
    time.advance(1);
    let seen = 0;
    for (let i = 0; i < 100 && seen === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      seen = await successes();
    }
    expect(seen).toBe(3);
  });

  it.each([
    ['older first', [0, 1]],
    ['newer first', [1, 0]],
  ])(
    'keeps the waiting successes of the current generation when one of an older generation comes %s',
    async (_, order) => {
      const prefix = uniquePrefix('generations');
      const time = new FakeTimeProvider(Date.now());
      const store = new RedisCircuitBreakerStateStore({
        client: clients[0],
        keyPrefix: prefix,
        operationTimeout: SLACK,
        timeProvider: time,
      });
      const policy = toCircuitPolicy({ kind: 'time-window', samplingDuration: 60_000, minimumThroughput: 100 });
      const old = (await store.acquire('k', policy, time.now())).permit!;
      await store.isolate('k', policy, time.now());
      await store.close('k', policy, time.now()); // a new closed period: a new generation
      const current = (await store.acquire('k', policy, time.now())).permit!;
      expect(current.generation).toBeGreaterThan(old.generation);
      const permits = [old, current];
      for (const i of order) {
        time.advance(1);
        expect(store.record('k', policy, permits[i], 'success', time.now())).toBeUndefined();
      }
      await store.flush();
      const { metrics } = await store.exportSnapshot('k', policy);
      expect(metrics.kind === 'time-window' && metrics.windows.reduce((n, [, ok]) => n + ok, 0)).toBe(1);
    },
  );

  it('carries at most windowSize waiting successes for a count window: they replace every older outcome', async () => {
    const prefix = uniquePrefix('count-batch');
    const time = new FakeTimeProvider(Date.now());
    const store = new RedisCircuitBreakerStateStore({
      client: clients[0],
      keyPrefix: prefix,
      operationTimeout: SLACK,
      timeProvider: time,
    });
    const policy = toCircuitPolicy({ kind: 'count-window', windowSize: 3, minimumThroughput: 100 });
    const tick = () => {
      time.advance(1);
      return time.now();
    };
    for (let i = 0; i < 3; i++) {
      const { permit } = await store.acquire('k', policy, time.now());
      await store.record('k', policy, permit!, 'failure', tick());
    }
    for (const successes of [3, 5]) {
      const permits = [];
      for (let i = 0; i < successes; i++) permits.push((await store.acquire('k', policy, time.now())).permit!);
      for (const permit of permits) expect(store.record('k', policy, permit, 'success', tick())).toBeUndefined();
      await store.flush();
      expect((await store.exportSnapshot('k', policy)).metrics).toEqual({ kind: 'count-window', outcomes: '000' });
      const { permit } = await store.acquire('k', policy, time.now());
      await store.record('k', policy, permit!, 'failure', tick());
      expect((await store.exportSnapshot('k', policy)).metrics).toEqual({ kind: 'count-window', outcomes: '001' });
    }
  });

  it('serves closed circuits from its read-through cache for localCacheTtl, seeing an opening elsewhere within that bound', async () => {
    const prefix = uniquePrefix('cache');
    const policy = toCircuitPolicy({ kind: 'consecutive', failureThreshold: 1, breakDuration: 60_000 });
    const cached = new RedisCircuitBreakerStateStore({
      client: clients[0],
      keyPrefix: prefix,
      localCacheTtl: 500,
      operationTimeout: SLACK,
    });
    const other = new RedisCircuitBreakerStateStore({ client: clients[0], keyPrefix: prefix, operationTimeout: SLACK });
    expect((await cached.acquire('k', policy, 10_000)).state).toBe('closed');
    const { permit } = await other.acquire('k', policy, 10_100);
    await other.record('k', policy, permit!, 'failure', 10_100);
    const stale = cached.acquire('k', policy, 10_200);
    expect(stale).toEqual({ state: 'closed', permit: expect.objectContaining({ probe: false }) }); // from memory, synchronously
    const fresh = await cached.acquire('k', policy, 10_500);
    expect(fresh.state).toBe('open');
  });

  it('serves from its cache only a circuit it saw closed: one it saw open is asked about again', async () => {
    const policy = toCircuitPolicy({ kind: 'consecutive', failureThreshold: 1, breakDuration: 60_000 });
    const prefix = uniquePrefix('cache-open');
    const cached = new RedisCircuitBreakerStateStore({
      client: clients[0],
      keyPrefix: prefix,
      localCacheTtl: 60_000,
      operationTimeout: SLACK,
    });
    const other = new RedisCircuitBreakerStateStore({ client: clients[0], keyPrefix: prefix, operationTimeout: SLACK });
    const { permit } = await other.acquire('k', policy, 10_000);
    await other.record('k', policy, permit!, 'failure', 10_000);
    expect(await cached.acquire('k', policy, 10_100)).toMatchObject({ state: 'open', retryAfter: 59_900 });
    expect(await cached.acquire('k', policy, 10_200)).toMatchObject({ state: 'open', retryAfter: 59_800 });
  });

  it('without localCacheTtl asks Redis on every acquire, also when the clock steps back', async () => {
    const policy = toCircuitPolicy({ kind: 'consecutive', failureThreshold: 1, breakDuration: 60_000 });
    const prefix = uniquePrefix('no-cache');
    const store = new RedisCircuitBreakerStateStore({ client: clients[0], keyPrefix: prefix, operationTimeout: SLACK });
    const other = new RedisCircuitBreakerStateStore({ client: clients[0], keyPrefix: prefix, operationTimeout: SLACK });
    expect((await store.acquire('k', policy, 10_000)).state).toBe('closed');
    const { permit } = await other.acquire('k', policy, 9_000);
    await other.record('k', policy, permit!, 'failure', 9_000);
    expect(await store.acquire('k', policy, 9_999)).toMatchObject({ state: 'open', retryAfter: 59_001 });
  });

  it.each([
    [
      'an isolation by this store',
      async (s: RedisCircuitBreakerStateStore, p: CircuitPolicy): Promise<void> => {
        await s.isolate('k', p, 10_100);
      },
      'isolated',
    ],
    [
      'an opening recorded by this store',
      async (s: RedisCircuitBreakerStateStore, p: CircuitPolicy): Promise<void> => {
        const { permit } = await s.acquire('k', p, 10_100);
        await s.record('k', p, permit!, 'failure', 10_100);
      },
      'open',
    ],
    [
      'an imported snapshot',
      async (s: RedisCircuitBreakerStateStore, p: CircuitPolicy): Promise<void> =>
        s.importSnapshot('k', p, { ...(await s.exportSnapshot('k', p)), state: 'open', blockedUntil: 70_000 }),
      'open',
    ],
  ] as const)('does not serve a circuit from its cache after %s', async (_, change, expected) => {
    const policy = toCircuitPolicy({ kind: 'consecutive', failureThreshold: 1, breakDuration: 60_000 });
    const store = new RedisCircuitBreakerStateStore({
      client: clients[0],
      keyPrefix: uniquePrefix('cache-drop'),
      localCacheTtl: 60_000,
      operationTimeout: SLACK,
    });
    expect((await store.acquire('k', policy, 10_000)).state).toBe('closed'); // cached from now on
    expect(store.acquire('k', policy, 10_050)).toMatchObject({ state: 'closed' });
    await change(store, policy);
    expect((await store.acquire('k', policy, 10_200)).state).toBe(expected);
  });

  it('answers from its outage mode at once while Redis cannot be reached, and logs once', async () => {
    const broken = redisClient({ url: 'redis://127.0.0.1:1' });
    broken.on('error', () => undefined);
    const policy = toCircuitPolicy({ kind: 'consecutive', failureThreshold: 1 });
    try {
      for (const [mode, expected] of [
        ['reject', { state: 'open' }],
        ['allow', { state: 'closed' }],
        ['local', { state: 'closed' }],
      ] as const) {
        const warnings: string[] = [];
        const store = new RedisCircuitBreakerStateStore({
          client: broken,
          outageMode: mode,
          logger: { warn: (m) => warnings.push(m) },
        });
        const first = await store.acquire('k', policy, Date.now());
        const second = store.acquire('k', policy, Date.now()); // while degraded: synchronous, no Redis call
        expect(first).toMatchObject(expected);
        expect(second).toMatchObject(expected);
        expect(store.isDegraded).toBe(true);
        expect(warnings).toHaveLength(1);
        if (mode === 'reject') expect((second as { retryAfter: number }).retryAfter).toBeGreaterThan(0);
      }
    } finally {
      broken.disconnect();
    }
  });

  it.each(['consecutive', 'count-window', 'time-window', 'slow-call'] as const)(
    'exports a %s circuit as the in-memory store does, and imports it back as it was',
    async (kind) => {
      const prefix = uniquePrefix(`export-${kind}`);
      const policy = toCircuitPolicy({
        kind,
        failureThreshold: 5,
        failureRatio: 0.9,
        minimumThroughput: 50,
        windowSize: 4,
        samplingDuration: 10_000,
        breakDuration: 30_000,
      });
      const redis = new RedisCircuitBreakerStateStore({
        client: clients[0],
        keyPrefix: prefix,
        operationTimeout: SLACK,
        timeProvider: new FakeTimeProvider(107_500), // the last outcome's time: nothing has left the window
      });
      const memory = new InMemoryCircuitBreakerStateStore();
      const outcomes = ['failure', 'success', 'failure', 'failure', 'success', 'failure'] as const;
      for (const [i, outcome] of outcomes.entries()) {
        const at = 100_000 + i * 1_500;
        for (const store of [redis, memory]) {
          const { permit } = await store.acquire('k', policy, at);
          await store.record('k', policy, permit!, outcome, at);
        }
      }
      await redis.flush();
      const exported = await redis.exportSnapshot('k', policy);
      expect(exported).toEqual(memory.exportSnapshot('k', policy));
      expect(await redis.exportSnapshot('never-used', policy)).toEqual(memory.exportSnapshot('never-used', policy));
      await redis.importSnapshot('copy', policy, exported);
      expect(await redis.exportSnapshot('copy', policy)).toEqual({ ...exported, generation: exported.generation + 1 });
    },
  );

  it('round-trips a snapshot (a restarted process finds the circuit open)', async () => {
    const prefix = uniquePrefix('snapshot');
    const policy = toCircuitPolicy({ kind: 'consecutive', failureThreshold: 2, breakDuration: 30_000 });
    const a = new RedisCircuitBreakerStateStore({ client: clients[0], keyPrefix: prefix, operationTimeout: SLACK });
    for (let i = 0; i < 2; i++) {
      const { permit } = await a.acquire('k', policy, 5_000);
      await a.record('k', policy, permit!, 'failure', 5_000);
    }
    const snapshot = await a.exportSnapshot('k', policy);
    expect(snapshot).toMatchObject({ version: 1, state: 'open', blockedUntil: 35_000 });
    const restarted = new RedisCircuitBreakerStateStore({
      client: clients[0],
      keyPrefix: prefix,
      operationTimeout: SLACK,
    });
    expect(await restarted.acquire('k', policy, 6_000)).toMatchObject({ state: 'open', retryAfter: 29_000 });
    await restarted.importSnapshot('other', policy, snapshot);
    expect(await restarted.acquire('other', policy, 6_000)).toMatchObject({ state: 'open', retryAfter: 29_000 });
  });
});
