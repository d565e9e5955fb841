import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Redis } from 'ioredis';
import { toCircuitPolicy } from '../../src/core/circuit-breaker/circuit-breaker.strategy.js';
import { CIRCUIT_BREAKER_STATE_STORE } from '../../src/nest/index.js';
import type { RedisCircuitBreakerStateStore } from '../../src/redis/index.js';
import { FakeTimeProvider } from '../../src/testing/index.js';
import { startInstance } from './redis-fleet.scenario.js';
import { uniquePrefix } from './redis-test.utils.js';
import { command, SENTINEL_GROUP, TestSentinelGroup, waitFor, type RedisProcess } from './redis-topology.utils.js';

/*
 * Failovers one after the other while one of the three Sentinels hangs (SIGSTOP): the module's Sentinel
 * connection (failoverDetector on) is told of each promotion by the live Sentinels, often while it is
 * still reconnecting from the previous one. Whatever ioredis does with such an attempt, the connection
 * must never end: after every failover the store writes to the new primary again.
 */

const group = new TestSentinelGroup();
const ROUNDS = 3;

beforeAll(async () => {
  await group.start();
}, 60_000);

afterAll(async () => {
  await group.stop();
});

async function announcedBy(sentinel: RedisProcess): Promise<number> {
  const [, port] = (await command(sentinel.port, 'SENTINEL', 'GET-MASTER-ADDR-BY-NAME', SENTINEL_GROUP)) as [
    string,
    string,
  ];
  return Number(port);
}

function role(port: number): Promise<string> {
  return command(port, 'INFO', 'replication').then((reply) => /role:(\w+)/.exec(String(reply))?.[1] ?? '');
}

describe('repeated Sentinel failovers with one of three Sentinels paused', () => {
  it('the store connection never ends: after every failover the store uses the new primary', async () => {
    const time = new FakeTimeProvider(Date.now());
    const keyPrefix = uniquePrefix('failovers');
    const app = await startInstance({
      redis: { sentinels: group.addresses, name: SENTINEL_GROUP },
      keyPrefix,
      time,
      retryInterval: 200,
    });
    const store = app.get<RedisCircuitBreakerStateStore>(CIRCUIT_BREAKER_STATE_STORE);
    const client = (store as unknown as { client: Redis }).client;
    const policy = toCircuitPolicy({ kind: 'consecutive', failureThreshold: 5, breakDuration: 30_000 });
    const [paused, ...live] = group.sentinels;
    const servers = [group.primary, group.replica];
    paused.pause();
    try {
      for (let round = 0; round < ROUNDS; round++) {
        const from = await announcedBy(live[0]);
        const to = servers.find((s) => s.port !== from)!.port;
        // Forced failover (no quorum needed); refused while the other server is no good replica yet.
        await waitFor(
          `failover ${round + 1} to start`,
          async () => (await command(live[0].port, 'SENTINEL', 'FAILOVER', SENTINEL_GROUP)) === 'OK',
          30_000,
        );
        await waitFor(
          `the live Sentinels to announce the primary on ${to}`,
          async () =>
            (await Promise.all(live.map(announcedBy))).every((p) => p === to) && (await role(to)) === 'master',
          30_000,
        );
        // The store writes to the new primary (an isolation is never served from memory).
        const key = `round-${round}`;
        await waitFor(
          `the store to write to the primary on ${to} (its client is ${client.status})`,
          async () => {
            time.advance(200); // past retryInterval: Redis is tried again on every poll
            await store.isolate(key, policy, time.now());
            return (await command(to, 'EXISTS', `${keyPrefix}:cb:{${key}}`)) === 1;
          },
          30_000,
        );
        // The former primary follows the new one: the next failover has a replica to promote.
        await waitFor(
          `the server on ${from} to replicate the one on ${to}`,
          async () => /master_link_status:up/.test(String(await command(from, 'INFO', 'replication'))),
          30_000,
        );
      }
      expect(client.status).not.toBe('end');
      expect(store.isDegraded).toBe(false);
    } finally {
      paused.resume();
      await app.close();
    }
  }, 180_000);
});
