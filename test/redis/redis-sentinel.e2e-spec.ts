import 'reflect-metadata';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { INestApplication } from '@nestjs/common';
import { Redis } from 'ioredis';
import { BrokenCircuitError, type ResilienceEvent } from '../../src/index.js';
import { CIRCUIT_BREAKER_STATE_STORE } from '../../src/nest/index.js';
import type { RedisCircuitBreakerStateStore } from '../../src/redis/index.js';
import { FakeTimeProvider } from '../../src/testing/index.js';
import { toCircuitPolicy } from '../../src/core/circuit-breaker/circuit-breaker.strategy.js';
import { dependency, describeFleet, InventoryService, settle, startInstance } from './redis-fleet.scenario.js';
import { expectOutageModes } from './redis-outage.scenario.js';
import { uniquePrefix } from './redis-test.utils.js';
import { command, SENTINEL_GROUP, TestSentinelGroup, waitFor } from './redis-topology.utils.js';
import { WarningLogger } from '../utils/capturing.logger.js';

const group = new TestSentinelGroup();
const clients: Redis[] = [];

beforeAll(async () => {
  await group.start();
}, 60_000);

afterAll(async () => {
  for (const c of clients.splice(0)) c.disconnect();
  await group.stop();
});

const where = () => ({ sentinels: group.addresses, name: SENTINEL_GROUP });

describeFleet('three application instances sharing one circuit on a Sentinel-managed primary', where);

/** The state of a store's Redis client, for a failure message. */
function describeClient(store: RedisCircuitBreakerStateStore): string {
  const client = (store as unknown as { client: Redis }).client;
  return `is ${client.status}, at ${String(client.options.host)}:${String(client.options.port)}`;
}

/** Advances `time` by `step` ms, at most once per `2 * step` ms of real time (half as fast as it). */
function pacedAdvance(time: FakeTimeProvider, step: number): () => void {
  let last = -Infinity;
  return () => {
    const now = performance.now();
    if (now - last < 2 * step) return;
    last = now;
    time.advance(step);
  };
}

async function replicaCaughtUp(): Promise<void> {
  const offset = (port: number, field: string) =>
    command(port, 'INFO', 'replication').then((reply) =>
      Number(new RegExp(`${field}:(\\d+)`).exec(String(reply))?.[1]),
    );
  await waitFor('the replica to have every write of the primary', async () => {
    const primary = await offset(group.primary.port, 'master_repl_offset');
    return (await offset(group.replica.port, 'slave_repl_offset')) >= primary;
  });
}

describe('a Sentinel failover mid-traffic', () => {
  const apps: INestApplication[] = [];
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((a) => a.close()));
    dependency.calls = 0;
    dependency.failing = true;
  });

  it('fails no call because of the store: local fallback in the gap (logged and reported once), re-sync after the promotion, the gap opening written back', async () => {
    const time = new FakeTimeProvider(Date.now());
    const keyPrefix = uniquePrefix('failover');
    const log = new WarningLogger();
    const events: ResilienceEvent[][] = [[], [], []];
    for (let i = 0; i < 3; i++) {
      apps.push(
        await startInstance({ redis: where(), keyPrefix, time, events: events[i], retryInterval: 200, logger: log }),
      );
    }
    const services = apps.map((a) => a.get(InventoryService));
    const stores = apps.map((a) => a.get<RedisCircuitBreakerStateStore>(CIRCUIT_BREAKER_STATE_STORE));
    dependency.failing = false;
    // Some shared state before the failover: two failures recorded in Redis (threshold 5).
    dependency.failing = true;
    for (let i = 0; i < 2; i++) await services[i].check().catch(() => undefined);
    dependency.failing = false;
    expect(await settle(services.map((s) => s.check()))).toEqual(['ok', 'ok', 'ok']);
    await replicaCaughtUp();

    // Traffic on every instance while the primary dies.
    const results: string[] = [];
    let running = true;
    const traffic = (async () => {
      let i = 0;
      while (running) {
        results.push(...(await settle([services[i++ % 3].check()])));
        await new Promise((resolve) => setTimeout(resolve, 2));
      }
    })();
    await group.primary.kill();
    await waitFor('every instance to fall back', () => stores.every((s) => s.isDegraded));
    const afterKill = results.length;
    await waitFor('traffic during the gap', () => results.length >= afterKill + 15);
    running = false;
    await traffic;
    expect(results.every((r) => r === 'ok')).toBe(true);

    // Still in the gap (the stores leave Redis alone until retryInterval passes on their clock): the
    // dependency fails, the local circuit of instance 0 opens after five failures and protects it.
    dependency.failing = true;
    const before = dependency.calls;
    const gap: string[] = [];
    for (let i = 0; i < 8; i++) gap.push(...(await settle([services[0].check()])));
    expect(gap).toEqual([...Array(5).fill('failed'), ...Array(3).fill('broken')]);
    expect(dependency.calls - before).toBe(5);

    // The Sentinels promote the replica; once retryInterval has passed, every instance uses Redis again.
    await group.waitForPrimary(group.replica.port);
    const callsAfterPromotion = dependency.calls;
    // The fake clock moves on by retryInterval at most once per 400 ms of real time, so within the waits'
    // bounds (20 s each) it never passes the circuit's 30 s break duration.
    const advanceRetryInterval = pacedAdvance(time, 200);
    const whileReturning: string[] = [];
    await waitFor('instance 0 to use the new primary', async () => {
      advanceRetryInterval();
      whileReturning.push(...(await settle([services[0].check()])));
      if (!stores[0].isDegraded) return true;
      throw new Error(`still degraded, its client ${describeClient(stores[0])}`);
    });
    // The circuit that opened in the gap rejected every call meanwhile, the one that found Redis back too.
    expect(new Set(whileReturning)).toEqual(new Set(['broken']));
    // Instances 1 and 2 come back too (asked through their stores, so no call reaches the dependency
    // while their connections find the new primary).
    const [hashKey] = (await command(group.replica.port, 'KEYS', `${keyPrefix}:cb:*`)) as string[];
    const circuitKey = /\{(.*)\}$/.exec(hashKey)![1];
    const policy = toCircuitPolicy({ kind: 'consecutive', failureThreshold: 5, breakDuration: 30_000 });
    await waitFor('instances 1 and 2 to use the new primary', async () => {
      advanceRetryInterval();
      for (const store of stores.slice(1)) await store.acquire(circuitKey, policy, time.now());
      return stores.every((store) => !store.isDegraded);
    });
    // Written back: the circuit that opened in the gap is open for the whole fleet, on the new primary.
    await expect(services[1].check()).rejects.toBeInstanceOf(BrokenCircuitError);
    await expect(services[2].check()).rejects.toBeInstanceOf(BrokenCircuitError);
    expect(stores.every((s) => !s.isDegraded)).toBe(true);
    expect(dependency.calls).toBe(callsAfterPromotion);
    const fresh = await startInstance({ redis: where(), keyPrefix, time });
    apps.push(fresh);
    await expect(fresh.get(InventoryService).check()).rejects.toBeInstanceOf(BrokenCircuitError);

    // One log line and one telemetry event per outage, per instance; one of each when it is over.
    expect(log.warnings.filter((w) => w.includes('unavailable'))).toHaveLength(3);
    expect(log.infos.filter((m) => m.includes('is back'))).toHaveLength(3);
    for (const list of events) {
      expect(list.filter((e) => e.eventName === 'OnStateStoreUnavailable')).toHaveLength(1);
      expect(list.filter((e) => e.eventName === 'OnStateStoreRestored')).toHaveLength(1);
    }
  }, 60_000); // a Sentinel under load may take longer to elect (every wait polls with its own bound)
});

describe('the outage modes on a Sentinel-managed primary', () => {
  it('answer from their mode while the primary hangs, and use it again when it answers', async () => {
    const primaryPort = await group.primaryPort();
    const primary = [group.primary, group.replica].find((p) => p.port === primaryPort)!;
    await expectOutageModes(
      async () => {
        const client = new Redis({
          sentinels: group.addresses,
          name: SENTINEL_GROUP,
          enableOfflineQueue: false,
          maxRetriesPerRequest: 0,
          retryStrategy: () => 50,
        });
        client.on('error', () => undefined);
        clients.push(client);
        await waitFor('the sentinel client', () => client.status === 'ready');
        return client;
      },
      () => primary.pause(),
      () => primary.resume(),
    );
  }, 60_000);
});
