import { afterEach, describe, expect, it } from '@jest/globals';
import { performance } from 'node:perf_hooks';
import type { Redis } from 'ioredis';
import {
  BrokenCircuitError,
  CircuitBreakerManualControl,
  IsolatedCircuitError,
  ResiliencePipelineBuilder,
  type ResiliencePipeline,
} from '../../src/index.js';
import { RedisCircuitBreakerStateStore, type RedisCircuitBreakerStateStoreOptions } from '../../src/redis/index.js';
import { toCircuitPolicy } from '../../src/core/circuit-breaker/circuit-breaker.strategy.js';
import { RedisFaultProxy } from './redis-fault.proxy.js';
import { ready, redisClient, uniquePrefix } from './redis-test.utils.js';

/**
 * Faults on the wire between the store and a real redis-server (no mock): the store must keep every
 * call within its time budget (`operationTimeout`), fall back to its outage mode, and re-sync when Redis
 * answers again. These run on the real clock because the faults are real sockets; the time bounds are
 * generous (the budget is 100 ms; without it a black-holed call would wait for the OS, i.e. minutes,
 * since ioredis has no command timeout).
 */
const BUDGET = 100;
const RETRY_INTERVAL = 200;
/** Far below any OS timeout, far above the budget even on a loaded machine. */
const WITHIN_BUDGET = 2_000;

const down = new Error('dependency down');
/** For tests that need Redis's answer once it is back: a loaded machine still answers within it. */
const ROOMY = { operationTimeout: 1_000 };

interface Harness {
  proxy: RedisFaultProxy;
  client: Redis;
  store: RedisCircuitBreakerStateStore;
  pipeline: ResiliencePipeline<string>;
  control: CircuitBreakerManualControl;
  warnings: string[];
  logs: string[];
  /** What `onAvailabilityChange` was told, in order. */
  changes: [boolean, unknown][];
  keyPrefix: string;
  circuitKey: string;
}

const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function harness(
  label: string,
  options: Partial<Pick<RedisCircuitBreakerStateStoreOptions, 'operationTimeout' | 'localCacheTtl'>> = {},
): Promise<Harness> {
  const proxy = await RedisFaultProxy.start(process.env.REDIS_URL!);
  cleanups.push(() => proxy.close());
  const client = redisClient({ url: proxy.url, retryDelay: 20 });
  client.on('error', () => undefined);
  cleanups.push(() => Promise.resolve(client.disconnect()));
  await ready(client);
  const warnings: string[] = [];
  const logs: string[] = [];
  const changes: [boolean, unknown][] = [];
  const keyPrefix = uniquePrefix(label);
  const circuitKey = 'orders';
  const store = new RedisCircuitBreakerStateStore({
    client,
    keyPrefix,
    operationTimeout: BUDGET,
    retryInterval: RETRY_INTERVAL,
    logger: { warn: (m) => void warnings.push(m), log: (m) => void logs.push(m) },
    onAvailabilityChange: (available, error) => void changes.push([available, error]),
    ...options,
  });
  cleanups.push(() => store.flush());
  const control = new CircuitBreakerManualControl();
  const pipeline = breakerOn(store, circuitKey, control);
  return { proxy, client, store, pipeline, control, warnings, logs, changes, keyPrefix, circuitKey };
}

function breakerOn(
  store: RedisCircuitBreakerStateStore,
  circuitKey: string,
  manualControl?: CircuitBreakerManualControl,
): ResiliencePipeline<string> {
  return new ResiliencePipelineBuilder<string>()
    .addCircuitBreaker({
      kind: 'consecutive',
      failureThreshold: 2,
      breakDuration: 60_000,
      stateStore: store,
      circuitKey,
      manualControl,
    })
    .build();
}

/** A store and breaker on the same circuit, connected straight to Redis: what another instance sees. */
async function directView(h: Harness): Promise<{ pipeline: ResiliencePipeline<string>; client: Redis }> {
  const client = redisClient();
  cleanups.push(() => Promise.resolve(client.disconnect()));
  await ready(client);
  const store = new RedisCircuitBreakerStateStore({
    client,
    keyPrefix: h.keyPrefix,
    logger: { warn: () => undefined },
  });
  cleanups.push(() => store.flush());
  return { pipeline: breakerOn(store, h.circuitKey), client };
}

async function timed<T>(work: () => Promise<T>): Promise<{ ms: number; result: unknown }> {
  const started = performance.now();
  const result = await work().then(
    (v) => v,
    (e: unknown) => e,
  );
  return { ms: performance.now() - started, result };
}

/** Real time passes (sockets, Redis); bounded. */
function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Retries `check` on the real clock until it holds or `limit` ms pass. */
async function eventually(check: () => Promise<boolean>, limit = 3_000): Promise<boolean> {
  const until = performance.now() + limit;
  while (performance.now() < until) {
    if (await check()) return true;
    await pause(25);
  }
  return check();
}

const ok = () => Promise.resolve('ok');
const fail = () => Promise.reject(down);

describe('Redis circuit store under network faults (TCP proxy)', () => {
  it('latency below the budget: calls go to Redis and the store stays healthy', async () => {
    const h = await harness('slow-ok', { operationTimeout: 2_000 }); // far above the latency, even under load
    h.proxy.setLatency(10);
    await expect(h.pipeline.execute(fail)).rejects.toBe(down);
    await expect(h.pipeline.execute(fail)).rejects.toBe(down);
    expect(h.store.isDegraded).toBe(false);
    // The opening was decided in Redis: another instance sees it.
    const other = await directView(h);
    await expect(other.pipeline.execute(ok)).rejects.toBeInstanceOf(BrokenCircuitError);
    expect(h.warnings).toEqual([]);
  });

  it('latency above the budget: the call is answered within the budget by the outage mode, logged once', async () => {
    const h = await harness('slow');
    h.proxy.setLatency(5_000);
    const first = await timed(() => h.pipeline.execute(ok));
    expect(first.result).toBe('ok');
    expect(first.ms).toBeLessThan(WITHIN_BUDGET);
    expect(h.store.isDegraded).toBe(true);
    // During the outage the breaker still protects, locally.
    await expect(h.pipeline.execute(fail)).rejects.toBe(down);
    await expect(h.pipeline.execute(fail)).rejects.toBe(down);
    await expect(h.pipeline.execute(ok)).rejects.toBeInstanceOf(BrokenCircuitError);
    expect(h.warnings).toHaveLength(1);
    expect(h.warnings[0]).toMatch(/Redis circuit-breaker store unavailable \(no answer within 100 ms\)/);
  });

  it('a black-holed connection (no RST, no FIN) is detected within the budget, not after the OS timeout', async () => {
    const h = await harness('blackhole');
    await h.pipeline.execute(ok);
    h.proxy.blackhole();
    const first = await timed(() => h.pipeline.execute(ok));
    expect(first.result).toBe('ok');
    expect(first.ms).toBeLessThan(WITHIN_BUDGET);
    expect(h.store.isDegraded).toBe(true);
    expect(h.proxy.openConnections).toBe(1); // the connection is still "up": nothing told the client

    // While Redis is left alone the fallback answers without touching the network.
    const again = await timed(() => h.pipeline.execute(ok));
    expect(again.result).toBe('ok');
    // After retryInterval it is tried again, and again within the budget.
    await pause(RETRY_INTERVAL + 20);
    const retried = await timed(() => h.pipeline.execute(ok));
    expect(retried.result).toBe('ok');
    expect(retried.ms).toBeLessThan(WITHIN_BUDGET);
    expect(h.warnings).toHaveLength(1);
  });

  it('the write-back after an outage keeps an isolation made through another instance meanwhile', async () => {
    const h = await harness('writeback-isolated');
    const policy = toCircuitPolicy({ kind: 'consecutive', failureThreshold: 2, breakDuration: 60_000 });
    const client = redisClient();
    cleanups.push(() => Promise.resolve(client.disconnect()));
    await ready(client);
    // A generous budget: the isolation must reach Redis however loaded the machine is.
    const other = new RedisCircuitBreakerStateStore({
      client,
      keyPrefix: h.keyPrefix,
      operationTimeout: 5_000,
      logger: { warn: () => undefined },
    });
    await h.pipeline.execute(ok);
    h.proxy.blackhole();
    await expect(h.pipeline.execute(fail)).rejects.toBe(down);
    await expect(h.pipeline.execute(fail)).rejects.toBe(down); // opened here, locally
    await other.isolate(h.circuitKey, policy, Date.now()); // isolated by an operator, through another instance
    expect(other.isDegraded).toBe(false);
    h.proxy.heal();
    await pause(RETRY_INTERVAL + 20);
    await expect(h.pipeline.execute(ok)).rejects.toBeInstanceOf(BrokenCircuitError); // the write-back goes first
    expect(h.store.isDegraded).toBe(false);
    expect((await other.exportSnapshot(h.circuitKey, policy)).state).toBe('isolated');
  });

  it('recovery re-syncs: a circuit opened locally during the outage is written back to Redis', async () => {
    const h = await harness('resync');
    const other = await directView(h);
    await h.pipeline.execute(ok);
    h.proxy.blackhole();
    await expect(h.pipeline.execute(fail)).rejects.toBe(down); // times out to local, then fails locally
    await expect(h.pipeline.execute(fail)).rejects.toBe(down);
    await expect(h.pipeline.execute(ok)).rejects.toBeInstanceOf(BrokenCircuitError);
    // The rest of the fleet knew nothing of it.
    await expect(other.pipeline.execute(ok)).resolves.toBe('ok');

    h.proxy.heal();
    await pause(RETRY_INTERVAL + 20);
    // The next call reaches Redis again: the store says it is back, writes the open circuit back, and
    // that call too is refused by the circuit opened here.
    await expect(h.pipeline.execute(ok)).rejects.toBeInstanceOf(BrokenCircuitError);
    const resynced = await eventually(() =>
      other.pipeline.execute(ok).then(
        () => false,
        (e: unknown) => e instanceof BrokenCircuitError,
      ),
    );
    expect(resynced).toBe(true);
    await expect(h.pipeline.execute(ok)).rejects.toBeInstanceOf(BrokenCircuitError);
    expect(h.store.isDegraded).toBe(false);
    expect(h.logs).toEqual(['Redis circuit-breaker store is back.']);
    expect(h.warnings).toHaveLength(1);
    expect(h.changes).toEqual([
      [false, expect.objectContaining({ message: `no answer within ${BUDGET} ms` })],
      [true, undefined],
    ]);
  });

  it('after a recovery the circuits kept here are forgotten: the next outage starts afresh and writes back nothing stale', async () => {
    const h = await harness('resync-forget');
    const other = await directView(h);
    await h.pipeline.execute(ok);
    h.proxy.blackhole();
    await expect(h.pipeline.execute(fail)).rejects.toBe(down);
    await expect(h.pipeline.execute(fail)).rejects.toBe(down);
    h.proxy.heal();
    await pause(RETRY_INTERVAL + 20);
    await expect(h.pipeline.execute(ok)).rejects.toBeInstanceOf(BrokenCircuitError); // written back
    await h.control.close(); // closed again, in Redis
    await expect(other.pipeline.execute(ok)).resolves.toBe('ok');

    h.proxy.blackhole();
    // A new outage: the local circuit starts closed, not as the last outage left it.
    await expect(h.pipeline.execute(ok)).resolves.toBe('ok');
    h.proxy.heal();
    await pause(RETRY_INTERVAL + 20);
    await expect(h.pipeline.execute(ok)).resolves.toBe('ok');
    await expect(other.pipeline.execute(ok)).resolves.toBe('ok');
    expect(h.warnings).toHaveLength(2);
    expect(h.logs).toHaveLength(2);
  });

  it('a circuit isolated by hand during the outage stays isolated here, and is isolated for the fleet once Redis answers', async () => {
    const h = await harness('isolate-outage');
    const other = await directView(h);
    await h.pipeline.execute(ok);
    h.proxy.blackhole();
    await expect(h.pipeline.execute(ok)).resolves.toBe('ok'); // the outage is noticed
    await h.control.isolate(); // Redis is left alone: isolated locally, at once
    await expect(h.pipeline.execute(ok)).rejects.toBeInstanceOf(IsolatedCircuitError);
    await expect(other.pipeline.execute(ok)).resolves.toBe('ok');

    h.proxy.heal();
    await pause(RETRY_INTERVAL + 20);
    await expect(h.pipeline.execute(ok)).rejects.toBeInstanceOf(IsolatedCircuitError);
    await expect(other.pipeline.execute(ok)).rejects.toBeInstanceOf(IsolatedCircuitError);
    await h.control.close();
    await expect(other.pipeline.execute(ok)).resolves.toBe('ok');
  });

  it('a circuit closed by hand during the outage closes here at once, and Redis keeps its own state', async () => {
    const h = await harness('close-outage', ROOMY);
    const other = await directView(h);
    await h.pipeline.execute(ok);
    h.proxy.blackhole();
    await expect(h.pipeline.execute(fail)).rejects.toBe(down);
    await expect(h.pipeline.execute(fail)).rejects.toBe(down);
    await expect(h.pipeline.execute(ok)).rejects.toBeInstanceOf(BrokenCircuitError); // open here
    await h.control.close(); // Redis is left alone: closed locally, at once
    await expect(h.pipeline.execute(ok)).resolves.toBe('ok');
    await expect(other.pipeline.execute(ok)).resolves.toBe('ok');
    h.proxy.heal();
    await pause(RETRY_INTERVAL + 20);
    // Nothing was open here any more: nothing is written back, and the fleet's circuit is as it was.
    await expect(h.pipeline.execute(ok)).resolves.toBe('ok');
    await expect(other.pipeline.execute(ok)).resolves.toBe('ok');
    expect(h.store.isDegraded).toBe(false);
  });

  it('a circuit kept closed here during the outage does not overwrite the opening the fleet made meanwhile', async () => {
    const h = await harness('resync-fleet-opened', ROOMY);
    const other = await directView(h);
    await h.pipeline.execute(ok);
    h.proxy.blackhole();
    await expect(h.pipeline.execute(fail)).rejects.toBe(down); // one failure, counted here: still closed
    await expect(other.pipeline.execute(fail)).rejects.toBe(down);
    await expect(other.pipeline.execute(fail)).rejects.toBe(down); // opened in Redis by the fleet
    h.proxy.heal();
    await pause(RETRY_INTERVAL + 20);
    await expect(h.pipeline.execute(ok)).rejects.toBeInstanceOf(BrokenCircuitError); // Redis decides
    await expect(other.pipeline.execute(ok)).rejects.toBeInstanceOf(BrokenCircuitError);
    expect(h.store.isDegraded).toBe(false);
  });

  it('every outage writes back the circuits it opened here, not only the first', async () => {
    const h = await harness('resync-twice', ROOMY);
    const other = await directView(h);
    await h.pipeline.execute(ok);
    for (let outage = 0; outage < 2; outage++) {
      h.proxy.blackhole();
      await expect(h.pipeline.execute(fail)).rejects.toBe(down);
      await expect(h.pipeline.execute(fail)).rejects.toBe(down);
      await expect(h.pipeline.execute(ok)).rejects.toBeInstanceOf(BrokenCircuitError);
      await expect(other.pipeline.execute(ok)).resolves.toBe('ok'); // the fleet knows nothing of it yet
      h.proxy.heal();
      await pause(RETRY_INTERVAL + 20);
      await expect(h.pipeline.execute(ok)).rejects.toBeInstanceOf(BrokenCircuitError); // written back
      await expect(other.pipeline.execute(ok)).rejects.toBeInstanceOf(BrokenCircuitError);
      await h.control.close(); // closed again, for the fleet
      await expect(other.pipeline.execute(ok)).resolves.toBe('ok');
    }
    expect(h.warnings).toHaveLength(2);
    expect(h.logs).toHaveLength(2);
  });

  it('a flush that reaches Redis again ends the outage; a flush Redis does not answer begins one', async () => {
    const h = await harness('flush-availability', ROOMY);
    const policy = toCircuitPolicy({ kind: 'time-window', samplingDuration: 60_000, minimumThroughput: 100 });
    const permits = [];
    for (let i = 0; i < 2; i++) permits.push((await h.store.acquire('k', policy, Date.now())).permit!); // from Redis
    h.proxy.blackhole();
    expect(h.store.record('k', policy, permits[0], 'success', Date.now())).toBeUndefined(); // waits to be sent
    await h.store.flush(); // unanswered within the budget
    expect(h.store.isDegraded).toBe(true);
    expect(h.warnings).toEqual([expect.stringContaining('Redis circuit-breaker store unavailable')]);
    expect(h.changes).toEqual([[false, expect.objectContaining({ message: 'no answer within 1000 ms' })]]);
    h.proxy.heal();
    await pause(RETRY_INTERVAL + 20);
    expect(h.store.record('k', policy, permits[1], 'success', Date.now())).toBeUndefined();
    await h.store.flush(); // answered: Redis is back
    expect(h.store.isDegraded).toBe(false);
    expect(h.logs).toEqual(['Redis circuit-breaker store is back.']);
    expect(h.changes.at(-1)).toEqual([true, undefined]);
  });

  it('flush() with nothing waiting sends nothing, not even the write-back of a recovery (nothing is left in flight at shutdown)', async () => {
    const h = await harness('flush-nothing', ROOMY);
    const sent: unknown[] = [];
    const target = h.client as unknown as { nestResilienceCircuit: (...a: unknown[]) => Promise<unknown> };
    const original = target.nestResilienceCircuit;
    target.nestResilienceCircuit = (...a: unknown[]) => {
      sent.push(a[1]);
      return original.apply(h.client, a);
    };
    await h.pipeline.execute(ok);
    h.proxy.blackhole();
    await expect(h.pipeline.execute(fail)).rejects.toBe(down);
    await expect(h.pipeline.execute(fail)).rejects.toBe(down); // opened here
    h.proxy.heal();
    await pause(RETRY_INTERVAL + 20); // Redis may be tried again: the next call writes the opening back
    sent.length = 0;
    await h.store.flush();
    await pause(50);
    expect(sent).toEqual([]);
    expect(h.store.isDegraded).toBe(true);
    await expect(h.pipeline.execute(ok)).rejects.toBeInstanceOf(BrokenCircuitError);
    expect(sent).toEqual(['writeBack', 'acquire']); // the next call writes it back
  });

  it('flush() during an outage drops the waiting successes at once instead of waiting for Redis', async () => {
    const h = await harness('flush-outage', { operationTimeout: 1_500 });
    const policy = toCircuitPolicy({ kind: 'time-window', samplingDuration: 60_000, minimumThroughput: 100 });
    const { permit } = await h.store.acquire('k', policy, Date.now()); // from Redis
    h.proxy.blackhole();
    expect((await h.store.acquire('other', policy, Date.now())).permit).toBeDefined(); // the outage is noticed
    expect(h.store.record('k', policy, permit!, 'success', Date.now())).toBeUndefined(); // waits to be sent
    const flushed = await timed(() => h.store.flush());
    expect(flushed.ms).toBeLessThan(1_000); // it did not wait for the 1.5 s budget
    h.proxy.heal();
    const view = new RedisCircuitBreakerStateStore({ client: (await directView(h)).client, keyPrefix: h.keyPrefix });
    const { metrics } = await view.exportSnapshot('k', policy);
    expect(metrics).toEqual({ kind: 'time-window', windows: [] });
  });

  it('with the read-through cache, an outage noticed on one circuit stops serving every other circuit from the cache', async () => {
    const h = await harness('cache-outage', { localCacheTtl: 60_000 });
    const payments = breakerOn(h.store, 'payments');
    await h.pipeline.execute(ok);
    await payments.execute(ok); // both seen closed: served from memory from now on
    h.proxy.blackhole();
    await expect(h.pipeline.execute(fail)).rejects.toBe(down); // noticed here (times out), counted locally
    // payments is no longer answered from the cache: its failures count in the local circuit.
    await expect(payments.execute(fail)).rejects.toBe(down);
    await expect(payments.execute(fail)).rejects.toBe(down);
    await expect(payments.execute(ok)).rejects.toBeInstanceOf(BrokenCircuitError);
  });

  it('a retry that finds Redis still away keeps the circuit opened here: it stays open, within the budget', async () => {
    const h = await harness('resync-still-down');
    await h.pipeline.execute(ok);
    h.proxy.blackhole();
    await expect(h.pipeline.execute(fail)).rejects.toBe(down);
    await expect(h.pipeline.execute(fail)).rejects.toBe(down);
    await pause(RETRY_INTERVAL + 20);
    // Redis is tried again (the write-back of the opening goes unanswered) and the local circuit decides.
    const retried = await timed(() => h.pipeline.execute(ok));
    expect(retried.result).toBeInstanceOf(BrokenCircuitError);
    expect(retried.ms).toBeLessThan(WITHIN_BUDGET);
    expect(h.store.isDegraded).toBe(true);
    expect(h.logs).toEqual([]);
    // Once Redis answers, the opening reaches it.
    h.proxy.heal();
    await pause(RETRY_INTERVAL + 20);
    await expect(h.pipeline.execute(ok)).rejects.toBeInstanceOf(BrokenCircuitError);
    const other = await directView(h);
    await expect(other.pipeline.execute(ok)).rejects.toBeInstanceOf(BrokenCircuitError);
    expect(h.warnings).toHaveLength(1);
  });

  it('recovery: calls already on their way when Redis answers again are refused by a circuit opened here meanwhile', async () => {
    const h = await harness('resync-concurrent');
    const other = await directView(h);
    await h.pipeline.execute(ok);
    h.proxy.blackhole();
    await expect(h.pipeline.execute(fail)).rejects.toBe(down);
    await expect(h.pipeline.execute(fail)).rejects.toBe(down);
    await expect(h.pipeline.execute(ok)).rejects.toBeInstanceOf(BrokenCircuitError);

    h.proxy.heal();
    await pause(RETRY_INTERVAL + 20);
    const calls = await Promise.allSettled(Array.from({ length: 5 }, () => h.pipeline.execute(ok)));
    expect(
      calls.map((c) => (c.status === 'rejected' && c.reason instanceof BrokenCircuitError ? 'refused' : c)),
    ).toEqual(Array.from({ length: 5 }, () => 'refused'));
    // Written back before any of them was decided: the fleet sees it open at once.
    await expect(other.pipeline.execute(ok)).rejects.toBeInstanceOf(BrokenCircuitError);
    expect(h.store.isDegraded).toBe(false);
    expect(h.logs).toEqual(['Redis circuit-breaker store is back.']);
  });

  it('recovery: a manual close sent as Redis answers again is not undone by the write-back of the local opening', async () => {
    const h = await harness('resync-close');
    const other = await directView(h);
    await h.pipeline.execute(ok);
    h.proxy.blackhole();
    await expect(h.pipeline.execute(fail)).rejects.toBe(down);
    await expect(h.pipeline.execute(fail)).rejects.toBe(down);
    await expect(h.pipeline.execute(ok)).rejects.toBeInstanceOf(BrokenCircuitError);

    h.proxy.heal();
    await pause(RETRY_INTERVAL + 20);
    await h.control.close();
    await expect(h.pipeline.execute(ok)).resolves.toBe('ok');
    await expect(other.pipeline.execute(ok)).resolves.toBe('ok');
  });

  it.each([
    ['reset (RST)', (p: RedisFaultProxy) => p.drop()],
    ['half-close (FIN to the client)', (p: RedisFaultProxy) => p.halfClose()],
  ])('a %s: calls stay within the budget, the client reconnects and the store comes back', async (_, fault) => {
    const h = await harness('drop');
    await h.pipeline.execute(ok);
    const acceptedBefore = h.proxy.accepted;
    fault(h.proxy);
    const during = await timed(() => h.pipeline.execute(ok));
    expect(during.result).toBe('ok');
    expect(during.ms).toBeLessThan(WITHIN_BUDGET);
    // ioredis reconnects through the proxy; once the retry interval is over the store uses Redis again.
    const back = await eventually(async () => {
      await h.pipeline.execute(ok);
      return !h.store.isDegraded && h.proxy.accepted > acceptedBefore && h.client.status === 'ready';
    });
    expect(back).toBe(true);
    // Redis decides again: two failures open the circuit for the whole fleet.
    await expect(h.pipeline.execute(fail)).rejects.toBe(down);
    await expect(h.pipeline.execute(fail)).rejects.toBe(down);
    const other = await directView(h);
    await expect(other.pipeline.execute(ok)).rejects.toBeInstanceOf(BrokenCircuitError);
    expect(h.warnings.length).toBeLessThanOrEqual(1);
  });
});
