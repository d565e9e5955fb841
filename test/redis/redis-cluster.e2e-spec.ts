import 'reflect-metadata';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { Injectable, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import fc from 'fast-check';
import { Cluster } from 'ioredis';
import { toCircuitPolicy } from '../../src/core/circuit-breaker/circuit-breaker.strategy.js';
import {
  BrokenCircuitError,
  RateLimit,
  RateLimiterRejectedError,
  ResilienceContext,
  ResilienceModule,
  type ResilienceEvent,
} from '../../src/index.js';
import { CIRCUIT_BREAKER_STATE_STORE } from '../../src/nest/index.js';
import { OAuthClientService, OAuthModule } from '../../src/nest/oauth/index.js';
import {
  RedisCircuitBreakerStateStore,
  RedisPendingAuthorizationStore,
  RedisRateLimiter,
} from '../../src/redis/index.js';
import type { PendingAuthorizationStore } from '../../src/oauth/index.js';
import { FakeTimeProvider } from '../../src/testing/index.js';
import { commandArb, configArb, runScenario } from '../contracts/circuit-breaker.contract.js';
import { dependency, describeFleet, InventoryService, settle, startInstance } from './redis-fleet.scenario.js';
import { expectOutageModes } from './redis-outage.scenario.js';
import { uniquePrefix } from './redis-test.utils.js';
import { TestCluster, waitFor } from './redis-topology.utils.js';

const cluster = new TestCluster();
const clients: Cluster[] = [];

/** A cluster client the way an application would make one: fail fast, follow slot moves at once. */
function clusterClient(): Cluster {
  const client = new Cluster(cluster.seeds, {
    enableOfflineQueue: false,
    retryDelayOnMoved: 0,
    retryDelayOnTryAgain: 5,
    clusterRetryStrategy: () => 50,
    redisOptions: { maxRetriesPerRequest: 0 },
  });
  client.on('error', () => undefined);
  clients.push(client);
  return client;
}

async function readyCluster(client: Cluster): Promise<Cluster> {
  await waitFor('the cluster client', () => client.status === 'ready');
  return client;
}

beforeAll(async () => {
  await cluster.start();
}, 60_000);

afterAll(async () => {
  for (const c of clients.splice(0)) c.disconnect();
  await cluster.stop();
});

describeFleet('three application instances sharing one circuit on a 3-primary Redis Cluster', () => ({
  cluster: cluster.seeds,
}));

describe('the Redis store on a Redis Cluster', () => {
  it('runs every breaker kind by the same contract, each circuit in one hash slot', async () => {
    const client = await readyCluster(clusterClient());
    const keyPrefix = uniquePrefix('cluster-contract');
    for (const kind of ['consecutive', 'count-window', 'time-window', 'slow-call'] as const) {
      let run = 0;
      await fc.assert(
        fc.asyncProperty(configArb(kind), fc.array(commandArb, { minLength: 1, maxLength: 30 }), (config, commands) =>
          runScenario(
            config,
            commands,
            // The contract is about breaker semantics: a busy machine's slow answer must not read as an outage.
            (timeProvider) =>
              new RedisCircuitBreakerStateStore({ client, keyPrefix, timeProvider, operationTimeout: 5_000 }),
            `${kind}-${++run}`,
          ),
        ),
        { numRuns: 8 },
      );
    }
    // A circuit is one hash-tagged key, its count window included: no script spans two keys or slots.
    const ordersPrefix = uniquePrefix('cluster-keys');
    const store = new RedisCircuitBreakerStateStore({ client, keyPrefix: ordersPrefix, operationTimeout: 5_000 });
    const policy = toCircuitPolicy({ kind: 'count-window', windowSize: 4, minimumThroughput: 2, failureRatio: 1 });
    const { permit } = await store.acquire('orders', policy, Date.now());
    await store.record('orders', policy, permit!, 'failure', Date.now());
    expect(await cluster.keys(`${ordersPrefix}:cb:*`)).toEqual([`${ordersPrefix}:cb:{orders}`]);
  });

  it('spreads the partitions of one limit over the slots and primaries (prints keys per primary)', async () => {
    const client = await readyCluster(clusterClient());
    const keyPrefix = uniquePrefix('spread');
    const limiter = new RedisRateLimiter({
      client,
      keyPrefix,
      name: 'api:rateLimiter',
      limit: { kind: 'sliding-window', permitLimit: 5, window: 60_000 },
      partitionKey: (context) => context.operationKey!,
      operationTimeout: 2_000,
    });
    const tenants = Array.from({ length: 60 }, (_, i) => `tenant-${i}`);
    for (const tenant of tenants) {
      expect((await limiter.acquire(new ResilienceContext({ operationKey: tenant }))).acquired).toBe(true);
    }
    const perNode = await Promise.all(cluster.nodes.map((node) => cluster.keys(`${keyPrefix}:rl2:*`, node)));
    const slots = new Set(await Promise.all(perNode.flat().map(async (key) => (await cluster.ownerOf(key)).slot)));
    console.log(
      `60 partitions of one limit: keys per primary ${perNode.map((keys) => keys.length).join(' / ')}, ${slots.size} distinct slots`,
    );
    expect(perNode.flat()).toHaveLength(60);
    expect(perNode.every((keys) => keys.length > 0)).toBe(true);
    expect(slots.size).toBeGreaterThan(50);
  });

  it('shares distributed rate limits and pending logins through the module connection to the cluster', async () => {
    @Injectable()
    class Api {
      @RateLimit('api')
      call(): string {
        return 'ok';
      }
    }
    const keyPrefix = uniquePrefix('cluster-module');
    const apps = await Promise.all(
      [0, 1].map(async () => {
        const moduleRef = await Test.createTestingModule({
          imports: [
            ResilienceModule.forRoot({
              store: { redis: { cluster: cluster.seeds, keyPrefix, operationTimeout: 10_000 } },
              pipelines: {
                api: { rateLimiter: { kind: 'sliding-window', permitLimit: 3, window: 60_000, distributed: true } },
              },
            }),
            OAuthModule.register({
              issuer: 'https://idp.example',
              clientId: 'c',
              redirectUri: 'https://app.example/cb',
              // No provider is reachable here: the pending logins are what this test is about.
              deferDiscovery: true,
            }),
          ],
          providers: [Api],
        }).compile();
        const app = moduleRef.createNestApplication({ logger: false });
        await app.init();
        return app;
      }),
    );
    try {
      const [a, b] = apps.map((app) => app.get(Api));
      const settled = await Promise.allSettled(
        [a, b, a, b, a].map((api) => Promise.resolve().then(() => api.call() as unknown as Promise<string>)),
      );
      expect(settled.filter((r) => r.status === 'fulfilled')).toHaveLength(3);
      expect(settled.every((r) => r.status === 'fulfilled' || r.reason instanceof RateLimiterRejectedError)).toBe(true);
      // A pending login saved through one instance is taken (once) through the other.
      const stores = apps.map((app) => app.get<{ store: PendingAuthorizationStore }>(OAuthClientService).store);
      expect(stores[0]).toBeInstanceOf(RedisPendingAuthorizationStore);
      const entry = { codeVerifier: 'v', nonce: 'n', issuer: 'i', redirectUri: 'r', browserBinding: 'b', createdAt: 0 };
      await stores[0].save('state-1', entry, 60_000);
      expect(await stores[1].take('state-1')).toEqual(entry);
      expect(await stores[0].take('state-1')).toBeUndefined();
    } finally {
      await Promise.all(apps.map((app) => app.close()));
    }
  });

  describe('resharding', () => {
    const apps: INestApplication[] = [];
    afterEach(async () => {
      await Promise.all(apps.splice(0).map((a) => a.close()));
      dependency.calls = 0;
      dependency.failing = true;
    });

    it("moves a live circuit's slot to another primary during traffic: no call fails because of the store, the circuit keeps its state", async () => {
      const time = new FakeTimeProvider(Date.now());
      const keyPrefix = uniquePrefix('reshard');
      const events: ResilienceEvent[] = [];
      for (let i = 0; i < 3; i++) {
        // A generous timeout: a fallback here would only mean a loaded machine, not a slot-move problem.
        apps.push(
          await startInstance({ redis: { cluster: cluster.seeds }, keyPrefix, time, events, operationTimeout: 2_000 }),
        );
      }
      const services = apps.map((a) => a.get(InventoryService));
      // The circuit opens fleet-wide (five failures), then is held open by Redis during the move.
      for (let i = 0; i < 5; i++) await services[i % 3].check().catch(() => undefined);
      expect(dependency.calls).toBe(5);

      const [circuitHash] = await cluster.keys(`${keyPrefix}:cb:*`);
      expect(circuitHash).toBeDefined();
      const { slot, node: before } = await cluster.ownerOf(circuitHash);
      const results: string[] = [];
      let moving = true;
      const traffic = (async () => {
        let i = 0;
        while (moving) {
          results.push(...(await settle([services[i++ % 3].check()])));
          await new Promise((resolve) => setImmediate(resolve)); // let the move make progress
        }
      })();
      const burst = async () => {
        results.push(...(await settle(Array.from({ length: 12 }, (_, i) => services[i % 3].check()))));
      };
      const after = await cluster.moveSlot(slot, burst);
      await burst();
      moving = false;
      await traffic;

      expect(after).not.toBe(before);
      expect((await cluster.ownerOf(circuitHash)).node).toBe(after);
      expect(await cluster.keys(`${keyPrefix}:cb:*`, after)).toEqual([circuitHash]);
      // Every call during the move was answered by the shared circuit: rejected, none reached the dependency,
      // and no instance fell back to a local circuit.
      expect(results.length).toBeGreaterThan(36);
      expect(results.every((r) => r === 'broken')).toBe(true);
      expect(dependency.calls).toBe(5);
      expect(events.filter((e) => e.eventName === 'OnStateStoreUnavailable')).toHaveLength(0);
      expect(apps.every((a) => !a.get<RedisCircuitBreakerStateStore>(CIRCUIT_BREAKER_STATE_STORE).isDegraded)).toBe(
        true,
      );
      // State kept on the new owner: still open until the break ends, then exactly one probe fleet-wide.
      time.advance(29_000);
      expect(await settle(services.map((s) => s.check()))).toEqual(['broken', 'broken', 'broken']);
      time.advance(1_000);
      const probing = await settle(Array.from({ length: 30 }, (_, i) => services[i % 3].check()));
      expect(probing.filter((r) => r === 'failed')).toHaveLength(1); // the probe (the dependency still fails)
      expect(probing.filter((r) => r === 'broken')).toHaveLength(29);
      expect(dependency.calls).toBe(6);
    });
  });

  it('uses an ioredis Cluster client of yours as the store connection, and leaves it open on shutdown', async () => {
    const client = await readyCluster(clusterClient());
    const time = new FakeTimeProvider(Date.now());
    const keyPrefix = uniquePrefix('given-cluster');
    const app = await startInstance({ redis: { client }, keyPrefix, time });
    try {
      for (let i = 0; i < 5; i++)
        await app
          .get(InventoryService)
          .check()
          .catch(() => undefined);
      expect(await cluster.keys(`${keyPrefix}:cb:*`)).toHaveLength(1);
      await expect(app.get(InventoryService).check()).rejects.toBeInstanceOf(BrokenCircuitError);
    } finally {
      await app.close();
      dependency.calls = 0;
    }
    expect(client.status).toBe('ready');
    expect(await client.ping()).toBe('PONG');
  });

  it('keeps the outage modes on a cluster (the primary of the circuit slot hangs)', async () => {
    let paused: { resume(): void } | undefined;
    await expectOutageModes(
      () => readyCluster(clusterClient()),
      async (key) => {
        const { node } = await cluster.ownerOf(key);
        node.pause();
        paused = node;
      },
      () => paused?.resume(),
    );
  });
});
