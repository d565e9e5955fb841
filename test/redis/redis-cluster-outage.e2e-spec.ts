import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { INestApplication } from '@nestjs/common';
import fc from 'fast-check';
import type { Cluster } from 'ioredis';
import { toCircuitPolicy } from '../../src/core/circuit-breaker/circuit-breaker.strategy.js';
import type { ResilienceEvent } from '../../src/index.js';
import { CIRCUIT_BREAKER_STATE_STORE } from '../../src/nest/index.js';
import { RedisCircuitBreakerStateStore } from '../../src/redis/index.js';
import { FakeTimeProvider } from '../../src/testing/index.js';
import { startInstance } from './redis-fleet.scenario.js';
import { uniquePrefix } from './redis-test.utils.js';
import { TestCluster, waitFor, type RedisProcess } from './redis-topology.utils.js';
import { WarningLogger } from '../utils/capturing.logger.js';

/*
 * A partial outage of a Redis Cluster: one of three primaries (no replicas) is killed for good. The
 * circuits on the two live primaries must keep being shared through Redis, and the dead one must make one
 * outage per instance — not one per call that happens to reach it after a live primary answered.
 */

const cluster = new TestCluster();
const apps: INestApplication[] = [];
/** Far beyond the test's own limits: a call that waits for it is a call that was not refused at once. */
const FAR = 120_000;
/**
 * Far below FAR: a call answered by then did not wait for the operation timeout. Not a speed bound: a
 * refused call goes through the client's redirections and retry delays, which a machine other work shares
 * stretches to seconds.
 */
const AT_ONCE = 20_000;
const RETRY_INTERVAL = 200;
/**
 * How a call to the dead primary fails: refused, or redirected to it until the client gives up — the last
 * redirection answered MOVED, or found the dead node's connection closed after its refusal (which of the
 * two depends on when the client last refreshed its slot table). Never the operation timeout.
 */
const REFUSED =
  /ECONNREFUSED|Too many Cluster redirections\. Last error: (ReplyError: MOVED|Error: Connection is closed\.)/;
const policy = toCircuitPolicy({ kind: 'consecutive', failureThreshold: 1, breakDuration: 60_000 });

async function atOnce<T>(call: () => Promise<T> | T): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const waited = new Promise<never>(
    (_, reject) => (timer = setTimeout(() => reject(new Error('waited for the operation timeout')), AT_ONCE)),
  );
  try {
    return await Promise.race([Promise.resolve(call()), waited]);
  } finally {
    clearTimeout(timer);
  }
}

let dead: RedisProcess;
let clients: Cluster[];
const time = new FakeTimeProvider(Date.now());

beforeAll(async () => {
  await cluster.start();
  // Two application instances, each with the connection the module opens from `cluster` seeds.
  for (let i = 0; i < 2; i++) {
    apps.push(
      await startInstance({
        redis: { cluster: cluster.seeds },
        keyPrefix: uniquePrefix('partial'),
        time,
        operationTimeout: FAR,
        retryInterval: RETRY_INTERVAL,
      }),
    );
  }
  clients = apps.map(
    (app) =>
      (app.get<RedisCircuitBreakerStateStore>(CIRCUIT_BREAKER_STATE_STORE) as unknown as { client: Cluster }).client,
  );
  // Not nodes[0]: the cluster is asked for slot owners through it.
  dead = cluster.nodes[2];
}, 60_000);

afterAll(async () => {
  await Promise.all(apps.map((a) => a.close()));
  await cluster.stop();
});

/** A circuit key per primary under `keyPrefix`: the dead primary's first, then the live ones'. */
async function keysPerPrimary(keyPrefix: string, tag: string): Promise<string[]> {
  const found = new Map<RedisProcess, string>();
  for (let i = 0; found.size < cluster.nodes.length; i++) {
    const key = `${tag}-${i}`;
    const { node } = await cluster.ownerOf(`${keyPrefix}:cb:{${key}}`);
    if (!found.has(node)) found.set(node, key);
  }
  return [dead, ...cluster.nodes.filter((n) => n !== dead)].map((n) => found.get(n)!);
}

describe('one primary of a 3-primary cluster down for good', () => {
  it('one outage per instance for that primary; circuits on the live primaries stay shared; refused calls fail fast', async () => {
    const firstPrefix = uniquePrefix('warm');
    // Every store's connection has talked to every primary before the kill.
    const warmKeys = await keysPerPrimary(firstPrefix, 'warm');
    for (const client of clients) {
      const store = new RedisCircuitBreakerStateStore({ client, keyPrefix: firstPrefix, logger: new WarningLogger() });
      for (const key of warmKeys) expect((await store.acquire(key, policy, time.now())).permit).toBeDefined();
    }
    await dead.kill();

    const command = fc.oneof(
      fc.record({ op: fc.constant('acquire' as const), instance: fc.nat(1), range: fc.nat(2) }),
      fc.record({
        op: fc.constant('isolate' as const),
        instance: fc.nat(1),
        range: fc.constant(1).chain(() => fc.nat({ max: 1 }).map((r) => r + 1)),
      }),
      fc.record({ op: fc.constant('advance' as const), instance: fc.constant(0), range: fc.constant(0) }),
    );
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(command, { minLength: 5, maxLength: 60 }), async (commands) => {
        const keyPrefix = uniquePrefix(`partial-${++run}`);
        const keys = await keysPerPrimary(keyPrefix, 'circuit');
        const logs = [new WarningLogger(), new WarningLogger()];
        const changes: boolean[][] = [[], []];
        const stores = clients.map(
          (client, i) =>
            new RedisCircuitBreakerStateStore({
              client,
              keyPrefix,
              timeProvider: time,
              operationTimeout: FAR,
              retryInterval: RETRY_INTERVAL,
              logger: logs[i],
              onAvailabilityChange: (available) => changes[i].push(available),
            }),
        );
        const isolated = new Set<number>();
        const reachedDead = [false, false];
        // Every command, then one acquire of every circuit by every instance: all in a bounded number of calls.
        const all = [
          ...commands,
          ...[0, 1].flatMap((instance) => [0, 1, 2].map((range) => ({ op: 'acquire' as const, instance, range }))),
        ];
        for (const { op, instance, range } of all) {
          const store = stores[instance];
          if (op === 'advance') {
            time.advance(RETRY_INTERVAL);
          } else if (op === 'isolate') {
            await atOnce(() => store.isolate(keys[range], policy, time.now()));
            isolated.add(range);
          } else {
            const decision = await atOnce(() => store.acquire(keys[range], policy, time.now()));
            if (range === 0) reachedDead[instance] = true;
            // A circuit on a live primary is Redis's: an isolation made through either instance is seen.
            else expect(decision.state).toBe(isolated.has(range) ? 'isolated' : 'closed');
          }
        }
        for (const i of [0, 1]) {
          const outages = logs[i].warnings.filter((w) => w.includes('unavailable'));
          expect(outages).toHaveLength(1);
          expect(reachedDead[i]).toBe(true);
          expect(outages[0]).toContain(`node 127.0.0.1:${dead.port} `);
          // Failed by the refusal itself (or, once the client's slot table was refreshed meanwhile, by live
          // primaries redirecting to the refusing node), not by the operation timeout.
          expect(outages[0]).toMatch(REFUSED);
          expect(logs[i].infos.filter((m) => m.includes('is back'))).toEqual([]);
          expect(changes[i]).toEqual([false]);
          expect(stores[i].isDegraded).toBe(true);
        }
      }),
      { numRuns: 6 },
    );
  }, 120_000);

  it('the module store raises one unavailable event for the dead primary, none for the live ones', async () => {
    // (A fresh instance, its telemetry collected: circuits on every primary, through the pipeline store.)
    const events: ResilienceEvent[] = [];
    const log = new WarningLogger();
    const keyPrefix = uniquePrefix('module');
    const app = await startInstance({
      redis: { cluster: cluster.seeds.filter((s) => !s.endsWith(`:${dead.port}`)) },
      keyPrefix,
      time,
      events,
      logger: log,
      operationTimeout: FAR,
      retryInterval: RETRY_INTERVAL,
    });
    apps.push(app);
    const store = app.get<RedisCircuitBreakerStateStore>(CIRCUIT_BREAKER_STATE_STORE);
    // A start may find the connection starting over (its ready check asked the dead primary): that is an
    // outage of the whole connection, not the one of the dead node this test is about.
    const client = (store as unknown as { client: Cluster }).client;
    await waitFor('the connection to be ready', () => client.status === 'ready');
    const keys = await keysPerPrimary(keyPrefix, 'm');
    // Eight rounds span four retry intervals: probes of the dead node that fail again must not start new outages.
    for (let round = 0; round < 8; round++) {
      for (const key of keys) await atOnce(() => store.acquire(key, policy, time.now()));
      time.advance(RETRY_INTERVAL / 2);
    }
    expect(events.filter((e) => e.eventName === 'OnStateStoreUnavailable')).toHaveLength(1);
    expect(events.filter((e) => e.eventName === 'OnStateStoreRestored')).toHaveLength(0);
    const outages = log.warnings.filter((w) => w.includes('unavailable'));
    expect(outages).toHaveLength(1);
    expect(outages[0]).toContain(`node 127.0.0.1:${dead.port} `);
    expect(outages[0]).toMatch(REFUSED);
  }, 180_000); // real connections refused by a dead node: generous for a loaded machine
});
