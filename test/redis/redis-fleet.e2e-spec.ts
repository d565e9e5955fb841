import 'reflect-metadata';
import { afterEach, describe, expect, it } from '@jest/globals';
import { Injectable, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { BrokenCircuitError, CircuitBreaker, Retry, ResilienceModule, type ResilienceEvent } from '../../src/index.js';
import type { RedisCircuitBreakerStateStore, StoreOutageMode } from '../../src/redis/index.js';
import { CIRCUIT_BREAKER_STATE_STORE } from '../../src/nest/index.js';
import { FakeTimeProvider } from '../../src/testing/index.js';
import type { Redis } from 'ioredis';
import { redisClient, ready, uniquePrefix } from './redis-test.utils.js';

/** The dependency every instance calls; it counts the requests that reach it, fleet-wide. */
class Dependency {
  calls = 0;
  failing = true;

  async call(): Promise<string> {
    this.calls++;
    if (this.failing) throw new Error('dependency down');
    return 'ok';
  }
}

const dependency = new Dependency();

@Injectable()
class InventoryService {
  @Retry({ maxRetryAttempts: 0 })
  @CircuitBreaker('inventory')
  check(): Promise<string> {
    return dependency.call();
  }
}

async function startInstance(options: {
  redisUrl: string;
  client?: Redis;
  keyPrefix: string;
  time: FakeTimeProvider;
  outageMode?: StoreOutageMode;
  events?: ResilienceEvent[];
}): Promise<INestApplication> {
  const moduleRef = await Test.createTestingModule({
    imports: [
      ResilienceModule.forRoot({
        timeProvider: options.time,
        telemetryListeners: options.events ? [{ write: (e) => options.events!.push(e) }] : [],
        store: {
          redis: {
            url: options.client ? undefined : options.redisUrl,
            client: options.client,
            keyPrefix: options.keyPrefix,
            outageMode: options.outageMode,
            retryInterval: 1_000,
          },
        },
        pipelines: {
          inventory: {
            circuitBreaker: {
              kind: 'consecutive',
              failureThreshold: 5,
              breakDuration: 30_000,
              permittedCallsInHalfOpen: 1,
            },
          },
        },
      }),
    ],
    providers: [InventoryService],
  }).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  await app.init();
  return app;
}

async function settle(promises: Promise<unknown>[]): Promise<string[]> {
  return Promise.all(
    promises.map((p) =>
      p.then(
        () => 'ok',
        (e: unknown) => (e instanceof BrokenCircuitError ? 'broken' : 'failed'),
      ),
    ),
  );
}

describe('three application instances sharing one Redis', () => {
  const apps: INestApplication[] = [];
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((a) => a.close()));
    dependency.calls = 0;
    dependency.failing = true;
  });

  it('opens the circuit fleet-wide after the threshold, and admits one probe per break across all instances', async () => {
    const time = new FakeTimeProvider(Date.now());
    const keyPrefix = uniquePrefix('fleet');
    for (let i = 0; i < 3; i++) apps.push(await startInstance({ redisUrl: process.env.REDIS_URL!, keyPrefix, time }));
    const services = apps.map((a) => a.get(InventoryService));

    // Round robin: five failures in a row, spread over the three instances, open the shared circuit.
    for (let i = 0; i < 5; i++) await services[i % 3].check().catch(() => undefined);
    expect(dependency.calls).toBe(5);
    const afterOpening = await settle(Array.from({ length: 30 }, (_, i) => services[i % 3].check()));
    expect(afterOpening.every((r) => r === 'broken')).toBe(true);
    expect(dependency.calls).toBe(5);

    // After the break, 60 concurrent calls from all instances: exactly one probe reaches the dependency.
    time.advance(30_000);
    dependency.failing = false;
    const probing = await settle(Array.from({ length: 60 }, (_, i) => services[i % 3].check()));
    expect(dependency.calls).toBe(6);
    expect(probing.filter((r) => r === 'ok')).toHaveLength(1);
    expect(probing.filter((r) => r === 'broken')).toHaveLength(59);
    // The probe succeeded: closed everywhere.
    expect(await settle(services.map((s) => s.check()))).toEqual(['ok', 'ok', 'ok']);
  });

  it('keeps the circuit open across a restart of an instance', async () => {
    const time = new FakeTimeProvider(Date.now());
    const keyPrefix = uniquePrefix('restart');
    const first = await startInstance({ redisUrl: process.env.REDIS_URL!, keyPrefix, time });
    for (let i = 0; i < 5; i++)
      await first
        .get(InventoryService)
        .check()
        .catch(() => undefined);
    await first.close();
    apps.push(await startInstance({ redisUrl: process.env.REDIS_URL!, keyPrefix, time }));
    await expect(apps[0].get(InventoryService).check()).rejects.toBeInstanceOf(BrokenCircuitError);
    expect(dependency.calls).toBe(5);
  });
});

describe('Redis going away mid-traffic', () => {
  let server: ChildProcess | undefined;
  const apps: INestApplication[] = [];
  const clients: Redis[] = [];

  afterEach(async () => {
    await Promise.all(apps.splice(0).map((a) => a.close()));
    clients.splice(0).forEach((c) => c.disconnect());
    server?.kill('SIGKILL');
    dependency.calls = 0;
    dependency.failing = true;
  });

  async function startRedis(port: number): Promise<ChildProcess> {
    const child = spawn(
      process.env.REDIS_SERVER_BIN ?? 'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      {
        stdio: ['ignore', 'pipe', 'ignore'],
      },
    );
    await new Promise<void>((resolve, reject) => {
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        if (output.includes('Ready to accept connections')) resolve();
      });
      child.once('exit', (code) => reject(new Error(`redis-server exited with ${code}`)));
    });
    child.stdout.removeAllListeners('data');
    child.stdout.resume();
    return child;
  }

  async function stopRedis(child: ChildProcess): Promise<void> {
    await new Promise((resolve) => {
      child.once('exit', resolve);
      child.kill('SIGKILL');
    });
  }

  it('never fails a call because of the store, falls back to local state, and re-syncs when Redis returns', async () => {
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port: p } = probe.address() as { port: number };
        probe.close(() => resolve(p));
      });
    });
    server = await startRedis(port);
    const time = new FakeTimeProvider(Date.now());
    const events: ResilienceEvent[] = [];
    // A client of the test's own, reconnecting every 20 ms (the module leaves given clients open).
    const client = redisClient({ url: `redis://127.0.0.1:${port}`, retryDelay: 20 });
    client.on('error', () => undefined);
    clients.push(client);
    await ready(client);
    const app = await startInstance({ redisUrl: '', client, keyPrefix: uniquePrefix('outage'), time, events });
    apps.push(app);
    const service = app.get(InventoryService);
    const store = app.get<RedisCircuitBreakerStateStore>(CIRCUIT_BREAKER_STATE_STORE);
    dependency.failing = false;
    expect(await settle([service.check(), service.check()])).toEqual(['ok', 'ok']);

    await stopRedis(server);
    // Traffic goes on: every call succeeds (the dependency is healthy), served by the local fallback.
    expect(await settle(Array.from({ length: 20 }, () => service.check()))).toEqual(Array(20).fill('ok'));
    expect(store.isDegraded).toBe(true);
    expect(events.filter((e) => e.eventName === 'OnStateStoreUnavailable')).toHaveLength(1);

    // The dependency fails during the outage: the local circuit opens and protects it.
    dependency.failing = true;
    const before = dependency.calls;
    const duringOutage: string[] = [];
    for (let i = 0; i < 10; i++) duringOutage.push(...(await settle([service.check()])));
    expect(duringOutage.filter((r) => r === 'failed')).toHaveLength(5);
    expect(duringOutage.filter((r) => r === 'broken')).toHaveLength(5);
    expect(dependency.calls - before).toBe(5);

    // Redis comes back on the same port; after the retry interval the store uses it again and tells it
    // about the circuit that opened meanwhile.
    server = await startRedis(port);
    await ready(client); // the client reconnects on its own
    time.advance(1_000);
    await service.check().catch(() => undefined);
    expect(store.isDegraded).toBe(false);
    expect(events.filter((e) => e.eventName === 'OnStateStoreRestored')).toHaveLength(1);
    // Re-synced: the circuit that opened locally is now open in Redis, for every instance.
    const other = await startInstance({
      redisUrl: `redis://127.0.0.1:${port}`,
      keyPrefix: (store as unknown as { prefix: string }).prefix,
      time,
    });
    apps.push(other);
    const callsBefore = dependency.calls;
    await expect(other.get(InventoryService).check()).rejects.toBeInstanceOf(BrokenCircuitError);
    expect(dependency.calls).toBe(callsBefore);
  });
});
