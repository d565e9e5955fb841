import 'reflect-metadata';
import { afterEach, describe, expect, it } from '@jest/globals';
import { Injectable, type INestApplication, type LoggerService } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import type { Redis } from 'ioredis';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  AdaptiveThrottling,
  isAdaptiveThrottlingRejectedError,
  ResilienceModule,
  ResiliencePipelineRegistry,
} from '../../src/index.js';
import { FakeTimeProvider } from '../../src/testing/index.js';
import { ready, redisClient, uniquePrefix } from './redis-test.utils.js';
import { freePort, RedisProcess, waitFor } from './redis-topology.utils.js';

/*
 * Two application instances share one adaptive throttling window through a redis-server of the test's
 * own (paused, killed and restarted here). The pipelines' clock is fake (syncs run when the test moves
 * it); Redis's time budget is real.
 */

const OPERATION_TIMEOUT = 200;
const RETRY_INTERVAL = 1_000;
const SYNC_INTERVAL = 1_000;

/** The dependency both instances call: it refuses (503) while `refusing`, and counts the calls that reach it. */
const dependency = {
  calls: 0,
  refusing: false,
  async call(): Promise<string> {
    this.calls++;
    await Promise.resolve();
    if (this.refusing) throw Object.assign(new Error('Service Unavailable'), { status: 503 });
    return 'ok';
  },
};

@Injectable()
class PricingService {
  @AdaptiveThrottling('pricing')
  quote(): Promise<string> {
    return dependency.call();
  }
}

/** Collects what the modules log (Nest's logger is one for the process: both instances write here). */
class Lines implements LoggerService {
  readonly lines: string[] = [];
  log(message: unknown): void {
    this.lines.push(String(message));
  }
  error(message: unknown): void {
    this.lines.push(String(message));
  }
  warn(message: unknown): void {
    this.lines.push(String(message));
  }
  debug(): void {}
  verbose(): void {}
  count(text: string): number {
    return this.lines.filter((l) => l === text).length;
  }
}

const UNAVAILABLE = `Redis adaptive throttling store unavailable (no answer within ${OPERATION_TIMEOUT} ms); each instance throttles on its own counts until it is back.`;
const BACK = 'Redis adaptive throttling store is back.';

async function startInstance(client: Redis, keyPrefix: string, time: FakeTimeProvider, logger: Lines) {
  const moduleRef = await Test.createTestingModule({
    imports: [
      ResilienceModule.forRoot({
        timeProvider: time,
        store: {
          redis: {
            client,
            keyPrefix,
            operationTimeout: OPERATION_TIMEOUT,
            retryInterval: RETRY_INTERVAL,
            // Circuits and limits would fail closed; the throttle's fallback is its own counts whatever the mode.
            outageMode: 'reject',
          },
        },
        pipelines: {
          pricing: {
            adaptiveThrottling: {
              k: 2,
              // Long enough that the counts stay in it however long the test moves the clock.
              window: '1h',
              // Decides every call at 0.5: rejected exactly while the probability is above one half.
              random: () => 0.5,
              fleet: { syncInterval: `${SYNC_INTERVAL}ms` },
            },
          },
        },
      }),
    ],
    providers: [PricingService],
  }).compile();
  const app = moduleRef.createNestApplication({ logger });
  await app.init();
  return app;
}

/** How each call ended: `ok`, `refused` (by the dependency) or `throttled` (rejected locally). */
async function outcomes(service: PricingService, count: number): Promise<string[]> {
  const results: string[] = [];
  for (let i = 0; i < count; i++) {
    results.push(
      await service.quote().then(
        () => 'ok',
        (e: unknown) => (isAdaptiveThrottlingRejectedError(e) ? 'throttled' : 'refused'),
      ),
    );
  }
  return results;
}

/** True when the call settled before the event loop could do any I/O: it waited for nothing. */
async function settlesAtOnce(call: Promise<unknown>): Promise<boolean> {
  const settled = call.then(
    () => true,
    () => true,
  );
  const later = new Promise<boolean>((resolve) => setImmediate(() => resolve(false)));
  return Promise.race([settled, later]);
}

describe('adaptive throttling shared by two instances through Redis', () => {
  const apps: INestApplication[] = [];
  const clients: Redis[] = [];
  let redis: RedisProcess | undefined;

  afterEach(async () => {
    redis?.resume();
    await Promise.all(apps.splice(0).map((a) => a.close()));
    clients.splice(0).forEach((c) => c.disconnect());
    await redis?.kill();
    dependency.calls = 0;
    dependency.refusing = false;
  });

  it("rejects on B after A's calls were refused; through a paused and a killed Redis no call fails or waits, each falls back to its own counts, then shares again", async () => {
    const port = await freePort();
    const dir = mkdtempSync(join(tmpdir(), 'nest-resilience-at-'));
    redis = new RedisProcess(port, process.env.REDIS_SERVER_BIN ?? 'redis-server', [
      ...['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
    ]);
    await redis.start();
    const url = `redis://127.0.0.1:${port}`;
    const connect = async () => {
      const client = redisClient({ url, retryDelay: 20 });
      client.on('error', () => undefined);
      clients.push(client);
      await ready(client);
      return client;
    };
    const [clientA, clientB, probe] = [await connect(), await connect(), await connect()];
    const time = new FakeTimeProvider(Date.now());
    const keyPrefix = uniquePrefix('throttle');
    const log = new Lines();
    apps.push(await startInstance(clientA, keyPrefix, time, log), await startInstance(clientB, keyPrefix, time, log));
    const [a, b] = apps.map((app) => app.get(PricingService));
    const figures = (app: INestApplication) =>
      app
        .get(ResiliencePipelineRegistry)
        .limiterStatistics()
        .find((l) => l.pipelineName === 'pricing')!;
    const [figuresA, figuresB] = [() => figures(apps[0]).throttle!, () => figures(apps[1]).throttle!];
    /** The fleet's requests and accepts as Redis holds them. */
    const inRedis = async () => {
      let requests = 0;
      let accepts = 0;
      for (const key of await probe.keys(`${keyPrefix}:at:{pricing%3Aadaptive-throttling}:*`)) {
        const [r, acc] = await probe.hmget(key, 'r', 'a');
        requests += Number(r ?? 0);
        accepts += Number(acc ?? 0);
      }
      return { requests, accepts };
    };
    const syncRound = () => time.advance(SYNC_INTERVAL);
    /** Moves the clock a sync interval at a time (syncs run on it) until `condition` holds. */
    const untilSynced = (what: string, condition: () => boolean | Promise<boolean>) =>
      waitFor(what, async () => {
        if (await condition()) return true;
        syncRound();
        return false;
      });

    // B serves one call (accepted); A's 20 calls meet a dependency that refuses: 2 reach it, then A throttles.
    expect(await outcomes(b, 1)).toEqual(['ok']);
    dependency.refusing = true;
    const fromA = await outcomes(a, 20);
    expect(fromA.slice(0, 2)).toEqual(['refused', 'refused']);
    expect(fromA.slice(2)).toEqual(Array(18).fill('throttled'));
    expect(dependency.calls).toBe(3);
    expect(figures(apps[1])).toEqual(expect.objectContaining({ distributed: true }));

    await untilSynced('B sees the fleet', () => figuresB().requests === 21 && figuresB().shared === true);
    expect(figuresB()).toEqual(expect.objectContaining({ accepts: 1, shared: true }));
    // (21 − 2 × 1) / 22 > 0.5: B throttles calls it never saw refused.
    expect(await outcomes(b, 3)).toEqual(['throttled', 'throttled', 'throttled']);
    expect(dependency.calls).toBe(3);

    // Redis hangs (SIGSTOP). The dependency is healthy again.
    dependency.refusing = false;
    redis.pause();
    syncRound(); // both instances start a sync that hangs
    // The calls made meanwhile are decided from memory at once, as before the pause.
    for (let i = 0; i < 3; i++) expect(await settlesAtOnce(a.quote())).toBe(true);
    expect(await outcomes(a, 1)).toEqual(['throttled']);
    await untilSynced(
      'both instances fall back',
      () => log.count(UNAVAILABLE) === 2 && !figuresA().shared && !figuresB().shared,
    );
    // B's own counts: 4 requests, 1 accept — (4 − 2) / 5 < 0.5: its calls reach the dependency again.
    expect(figuresB()).toEqual(expect.objectContaining({ requests: 4, accepts: 1 }));
    for (let i = 0; i < 3; i++) expect(await settlesAtOnce(b.quote())).toBe(true);
    expect(await outcomes(b, 7)).toEqual(Array(7).fill('ok'));
    expect(dependency.calls).toBe(13);
    // A's own counts are all refusals: it keeps throttling, as it would alone.
    expect(figuresA()).toEqual(expect.objectContaining({ requests: 24, accepts: 0, shared: false }));

    // Redis answers again (SIGCONT): after retryInterval each instance syncs, and sends what it counted meanwhile.
    redis.resume();
    await untilSynced('both instances back', () => log.count(BACK) === 2);
    await untilSynced('the outage counted in Redis', async () => (await inRedis()).requests === 38);
    expect(await inRedis()).toEqual({ requests: 38, accepts: 11 });
    await untilSynced(
      'both see the fleet',
      () => figuresA().requests === 38 && figuresB().requests === 38 && !!figuresA().shared && !!figuresB().shared,
    );
    expect([figuresA().shared, figuresB().shared]).toEqual([true, true]);
    // 24 + 14 requests, 11 accepts: (38 − 22) / 39 < 0.5 — A's calls reach the dependency again.
    expect(figuresA().accepts).toBe(11);
    expect(await outcomes(a, 1)).toEqual(['ok']);

    // Redis is killed, and restarts empty.
    await redis.kill();
    await untilSynced('both instances fall back again', () => !figuresA().shared && !figuresB().shared);
    expect(await outcomes(b, 2)).toEqual(['ok', 'ok']);
    await redis.start();
    await Promise.all([ready(clientA), ready(clientB), ready(probe)]);
    await untilSynced('both instances back again', () => log.count(BACK) === 4);
    // Redis came back empty: each instance finds less than it sent, and sends every count of the window again.
    await untilSynced('the fleet re-counted in Redis', async () => (await inRedis()).requests === 41);
    expect(await inRedis()).toEqual({ requests: 41, accepts: 14 });
    await untilSynced('B sees the fleet again', () => figuresB().requests === 41 && figuresB().shared === true);
    expect(figuresB().accepts).toBe(14);
    // One line per outage and instance, and one when it ends.
    expect(log.lines.filter((l) => l.startsWith('Redis adaptive throttling store unavailable'))).toHaveLength(4);
    expect(log.count(BACK)).toBe(4);
    // The strategies report the switches on their pipeline too, and the module's logger writes them (A's
    // lines are within its many throttling events, which the logger's rate limit drops: B's are there).
    const reported = (event: string) =>
      log.lines.filter((l) => l.startsWith(`${event} pipeline=pricing strategy=adaptive-throttling`)).length;
    expect(reported('OnStateStoreUnavailable')).toBeGreaterThanOrEqual(2);
    expect(reported('OnStateStoreRestored')).toBeGreaterThanOrEqual(2);
  }, 60_000);
});
