import 'reflect-metadata';
import { afterEach, describe, expect, it } from '@jest/globals';
import { Test } from '@nestjs/testing';
import type { Redis } from 'ioredis';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { ResilienceModule, ResilienceValidationError } from '../../src/index.js';
import { ResilienceAdminModule, type FleetView } from '../../src/nest/admin/index.js';
import { FakeTimeProvider } from '../../src/testing/index.js';
import { someTraffic, startFleetInstance, type FleetInstance } from '../observability/fleet.fixture.js';
import { WarningLogger } from '../utils/capturing.logger.js';
import { redisClient, ready, uniquePrefix } from './redis-test.utils.js';
import { freePort, RedisProcess, waitFor } from './redis-topology.utils.js';

const fleetOf = async (instance: FleetInstance): Promise<FleetView> =>
  (await request(instance.app.getHttpServer()).get('/resilience/fleet').expect(200)).body as FleetView;

const stateOf = (view: FleetView, instance: string, pipeline: string) =>
  view.instances.find((i) => i.name === instance)?.circuits.find((c) => c.pipelineName === pipeline)?.state;

describe('the fleet view: three instances publishing their stats through one Redis', () => {
  const instances: FleetInstance[] = [];
  afterEach(async () => {
    await Promise.all(instances.splice(0).map((i) => i.app.close()));
  });

  it('lists every instance with its circuits and sums their calls; isolate acts fleet-wide', async () => {
    const time = new FakeTimeProvider(Date.now());
    const keyPrefix = uniquePrefix('fleet-stats');
    for (const name of ['api-1', 'api-2', 'api-3']) {
      instances.push(
        await startFleetInstance({ redisUrl: process.env.REDIS_URL!, keyPrefix, instanceName: name, time }),
      );
    }
    for (const [i, instance] of instances.entries()) await someTraffic(instance.registry, 2 + i);
    // Each instance publishes on its timer (the fake clock's); the view of any instance shows all three.
    await time.advanceAsync(1_000);
    await waitFor('three instances published', async () => (await fleetOf(instances[1])).instances.length === 3);
    const view = await fleetOf(instances[0]);
    expect(view.available).toBe(true);
    expect(view.instances.map((i) => [i.name, i.self, i.stale])).toEqual([
      ['api-1', true, false],
      ['api-2', false, false],
      ['api-3', false, false],
    ]);
    for (const name of ['api-1', 'api-2', 'api-3']) expect(stateOf(view, name, 'payments')).toBe('closed');
    // 2 + 3 + 4 rounds: one payments call each.
    expect(view.pipelines.find((p) => p.pipelineName === 'payments')).toMatchObject({ calls: 9, instances: 3 });
    expect(view.pipelines.find((p) => p.pipelineName === 'catalog')).toMatchObject({ calls: 9, failures: 3 });

    // Isolated through one instance's admin API: every instance reports it at its next publish.
    await request(instances[0].app.getHttpServer()).post('/resilience/circuits/payments/isolate').expect(200);
    await time.advanceAsync(1_000);
    await waitFor('every instance reports the isolation', async () => {
      const v = await fleetOf(instances[2]);
      return ['api-1', 'api-2', 'api-3'].every((name) => stateOf(v, name, 'payments') === 'isolated');
    });
    expect((await instances[1].registry.circuitState('payments'))!.state).toBe('isolated');
    await request(instances[2].app.getHttpServer()).post('/resilience/circuits/payments/close').expect(200);
    expect((await instances[0].registry.circuitState('payments'))!.state).toBe('closed');

    // An instance that stops drops out of the view.
    await instances.pop()!.app.close();
    expect((await fleetOf(instances[0])).instances.map((i) => i.name)).toEqual(['api-1', 'api-2']);
  });

  it('marks an instance stale after five silent intervals and leaves it out of the totals', async () => {
    const time = new FakeTimeProvider(Date.now());
    const keyPrefix = uniquePrefix('fleet-stale');
    const client = redisClient();
    try {
      await ready(client);
      instances.push(
        await startFleetInstance({ redisUrl: process.env.REDIS_URL!, keyPrefix, instanceName: 'api-1', time }),
      );
      // A snapshot an instance wrote six seconds ago (interval 1 s), then went silent.
      const old = { v: 1, at: time.now() - 6_000, interval: 1_000, c: [], p: [['payments', null, 5, 0, 0, 1, 2]] };
      await client.hset(`${keyPrefix}:fleet`, 'api-gone', JSON.stringify(old), 'api-broken', '{not json');
      await someTraffic(instances[0].registry, 1);
      const view = await fleetOf(instances[0]);
      expect(view.instances.map((i) => [i.name, i.stale, i.lastSeen])).toEqual([
        ['api-1', false, 0],
        ['api-gone', true, 6_000],
      ]);
      expect(view.pipelines.find((p) => p.pipelineName === 'payments')).toMatchObject({ calls: 1, instances: 1 });
      // What cannot be read is dropped from Redis.
      await waitFor(
        'the damaged entry dropped',
        async () => (await client.hexists(`${keyPrefix}:fleet`, 'api-broken')) === 0,
      );
    } finally {
      client.disconnect();
    }
  });
});

describe('the stats channel when Redis goes away', () => {
  let server: RedisProcess | undefined;
  let dir: string | undefined;
  let instance: FleetInstance | undefined;
  let client: Redis | undefined;
  afterEach(async () => {
    await instance?.app.close();
    client?.disconnect();
    await server?.kill();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('never slows or fails a call: publishing pauses, one log line per outage, and resumes when Redis is back', async () => {
    const port = await freePort();
    dir = mkdtempSync(join(tmpdir(), 'nest-resilience-fleet-'));
    const bin = process.env.REDIS_SERVER_BIN ?? 'redis-server';
    server = new RedisProcess(port, bin, [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      '--dir',
      dir,
    ]);
    await server.start();
    const url = `redis://127.0.0.1:${port}`;
    const time = new FakeTimeProvider(Date.now());
    const log = new WarningLogger();
    const keyPrefix = uniquePrefix('fleet-outage');
    // A long operation timeout: a publish under way while Redis hangs stays pending for 5 s.
    instance = await startFleetInstance({
      redisUrl: url,
      keyPrefix,
      instanceName: 'api-1',
      time,
      logger: log,
      operationTimeout: 2_000,
    });
    client = redisClient({ url });
    client.on('error', () => undefined);
    await ready(client);
    const snapshotAt = async () => {
      const text = await client!.hget(`${keyPrefix}:fleet`, 'api-1');
      return text ? (JSON.parse(text) as { at: number }).at : undefined;
    };
    const quotes = instance.registry.getPipeline('quotes');
    const calls = (n: number) => Promise.all(Array.from({ length: n }, () => quotes.execute(() => 'ok')));
    const fleetLines = () => log.warnings.filter((w) => w.startsWith('Redis fleet stats'));
    await waitFor('the first snapshot', async () => (await snapshotAt()) === time.now());

    // Redis hangs while a publish is under way: every call completes before that publish gives up.
    server.pause();
    await time.advanceAsync(1_000);
    expect(await calls(20)).toEqual(Array(20).fill('ok'));
    expect(fleetLines()).toEqual([]);
    await waitFor('the publish gave up', () => fleetLines().length === 1, 30_000);
    expect(fleetLines()).toEqual([
      expect.stringMatching(/^Redis fleet stats unavailable \(.+\); publishing pauses until it is back\.$/),
    ]);

    // Redis is gone: publishes keep coming due (and failing at once), calls keep succeeding, no new line.
    await server.kill();
    for (let round = 0; round < 5; round++) {
      await time.advanceAsync(1_000);
      expect(await calls(10)).toEqual(Array(10).fill('ok'));
    }
    expect(fleetLines()).toHaveLength(1);

    // Back on the same port: the next due publish lands, and its recovery is logged once.
    await server.start();
    await ready(client);
    await waitFor('a fresh snapshot', async () => {
      await time.advanceAsync(1_000);
      return (await snapshotAt().catch(() => undefined)) === time.now();
    });
    // The snapshot is in Redis before the publishing client has read the reply that logs the recovery.
    await waitFor('the recovery line', () => log.infos.some((l) => l.startsWith('Redis fleet stats')));
    expect(log.infos.filter((l) => l.startsWith('Redis fleet stats'))).toEqual(['Redis fleet stats is back.']);
    expect(fleetLines()).toHaveLength(1);
  });
});

describe('fleet options', () => {
  it('fail the start without the Redis store, and list every bad option at once', async () => {
    const start = (fleet: unknown) =>
      Test.createTestingModule({
        imports: [
          ResilienceModule.forRoot({ logging: false }),
          ResilienceAdminModule.forRoot({ unprotected: true, fleet: fleet as never }),
        ],
      })
        .compile()
        .then((m) => m.close());
    await expect(start(true)).rejects.toThrow(/admin\.fleet.*store: \{ redis \}/s);
    await expect(start(true)).rejects.toBeInstanceOf(ResilienceValidationError);
    let error: unknown;
    try {
      ResilienceAdminModule.forRoot({
        unprotected: true,
        fleet: { interval: 10, instanceName: ' ', extra: 1 } as never,
      });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ResilienceValidationError);
    const message = (error as Error).message;
    for (const path of ['admin.fleet.interval', 'admin.fleet.instanceName', 'admin.fleet.extra'])
      expect(message).toContain(path);
  });
});
