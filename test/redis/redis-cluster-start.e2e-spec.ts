import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { INestApplication } from '@nestjs/common';
import { toCircuitPolicy } from '../../src/core/circuit-breaker/circuit-breaker.strategy.js';
import type { ResilienceEvent } from '../../src/index.js';
import { CIRCUIT_BREAKER_STATE_STORE } from '../../src/nest/index.js';
import type { RedisCircuitBreakerStateStore } from '../../src/redis/index.js';
import { FakeTimeProvider } from '../../src/testing/index.js';
import { startInstance } from './redis-fleet.scenario.js';
import { uniquePrefix } from './redis-test.utils.js';
import { command, info, TestCluster, waitFor } from './redis-topology.utils.js';

/*
 * A start against a cluster that answers but is not ready: two of three primaries are dead, so the one
 * left is in a minority partition and reports `cluster_state:fail`. The client's ready check fails and it
 * starts over on its own — the application's start must not wait for that (redis.md: an unreachable Redis
 * does not hold the start up).
 */

const cluster = new TestCluster();
const apps: INestApplication[] = [];

beforeAll(async () => {
  await cluster.start();
  const [live, ...dead] = cluster.nodes;
  await Promise.all(dead.map((node) => node.kill()));
  await waitFor('the last primary to see the cluster fail', async () => {
    return info(await command(live.port, 'CLUSTER', 'INFO')).cluster_state === 'fail';
  });
}, 60_000);

afterAll(async () => {
  await Promise.all(apps.map((a) => a.close()));
  await cluster.stop();
});

describe('a start against a cluster in a minority partition', () => {
  it('completes and answers from the outage mode', async () => {
    const time = new FakeTimeProvider(Date.now());
    const events: ResilienceEvent[] = [];
    const app = await startInstance({
      redis: { cluster: [cluster.seeds[0]] },
      keyPrefix: uniquePrefix('minority'),
      time,
      events,
    });
    apps.push(app);
    const store = app.get<RedisCircuitBreakerStateStore>(CIRCUIT_BREAKER_STATE_STORE);
    const policy = toCircuitPolicy({ kind: 'consecutive', failureThreshold: 1, breakDuration: 1_000 });
    // The default outage mode: circuits are kept locally, so a call is admitted.
    for (const key of ['a', 'b', 'c', 'd', 'e', 'f']) {
      const decision = await store.acquire(`minority-${key}`, policy, time.now());
      expect(decision.permit).toBeDefined();
    }
    expect(store.isDegraded).toBe(true);
    // Circuits on every primary, one connection that is not ready: one outage, the connection's.
    expect(events.filter((e) => e.eventName === 'OnStateStoreUnavailable')).toHaveLength(1);
  }, 60_000);
});
