import 'reflect-metadata';
import { afterEach, describe, expect, it } from '@jest/globals';
import type { INestApplication } from '@nestjs/common';
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { BrokenCircuitError, type ResilienceEvent } from '../../src/index.js';
import type { RedisCircuitBreakerStateStore } from '../../src/redis/index.js';
import { CIRCUIT_BREAKER_STATE_STORE } from '../../src/nest/index.js';
import { FakeTimeProvider } from '../../src/testing/index.js';
import type { Redis } from 'ioredis';
import { redisClient, ready, uniquePrefix } from './redis-test.utils.js';
import { dependency, describeFleet, InventoryService, settle, startInstance } from './redis-fleet.scenario.js';

describeFleet('three application instances sharing one Redis', () => ({ url: process.env.REDIS_URL! }));

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
    const app = await startInstance({ redis: { client }, keyPrefix: uniquePrefix('outage'), time, events });
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
      redis: { url: `redis://127.0.0.1:${port}` },
      keyPrefix: (store as unknown as { prefix: string }).prefix,
      time,
    });
    apps.push(other);
    const callsBefore = dependency.calls;
    await expect(other.get(InventoryService).check()).rejects.toBeInstanceOf(BrokenCircuitError);
    expect(dependency.calls).toBe(callsBefore);
  });
});
