import 'reflect-metadata';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { Test } from '@nestjs/testing';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { ResilienceModule, ResiliencePipelineRegistry, ResilienceValidationError } from '../../src/index.js';
import { RedisCircuitBreakerStateStore, RedisRateLimiter } from '../../src/redis/index.js';
import { ready, redisClient } from './redis-test.utils.js';

/*
 * The default key prefix is the application's own name — the `name` of the package.json in the working
 * directory — so two applications on one Redis never share a circuit by accident; where there is no such
 * name, the prefix is required and the start fails saying so.
 */

const home = process.cwd();
const folders: string[] = [];
let client: Redis;

/** A working directory holding a package.json with this `name` (or none). */
function appFolder(name?: string): string {
  const folder = mkdtempSync(join(tmpdir(), 'nest-resilience-app-'));
  folders.push(folder);
  if (name !== undefined) writeFileSync(join(folder, 'package.json'), JSON.stringify({ name, version: '1.0.0' }));
  return folder;
}

/** An application started in `folder` with the Redis store and one circuit, failing once opens it. */
async function startIn(folder: string, redis: { keyPrefix?: string } = {}) {
  process.chdir(folder);
  try {
    const moduleRef = await Test.createTestingModule({
      imports: [
        ResilienceModule.forRoot({
          store: { redis: { url: process.env.REDIS_URL, ...redis } },
          pipelines: { inventory: { circuitBreaker: { kind: 'consecutive', failureThreshold: 1 } } },
          logging: false,
        }),
      ],
    }).compile();
    await moduleRef.init();
    return moduleRef;
  } finally {
    process.chdir(home);
  }
}

beforeAll(async () => {
  client = redisClient();
  await ready(client);
});

afterEach(() => process.chdir(home));

afterAll(async () => {
  await client.quit();
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

describe('the Redis key prefix', () => {
  it("defaults to the application's package name: two applications on one Redis keep their own circuits", async () => {
    const run = `${process.pid}-${Date.now()}`;
    const orders = await startIn(appFolder(`@acme/orders-${run}`));
    const billing = await startIn(appFolder(`billing-${run}`));
    try {
      const failing = () => Promise.reject(new Error('inventory down'));
      await expect(orders.get(ResiliencePipelineRegistry).getPipeline('inventory').execute(failing)).rejects.toThrow(
        'inventory down',
      );
      expect(await client.keys(`@acme/orders-${run}:cb:*`)).toEqual([
        `@acme/orders-${run}:cb:{inventory/circuit-breaker}`,
      ]);
      // The other application's circuit of the same name is its own: still closed, under its own prefix.
      const inventory = billing.get(ResiliencePipelineRegistry).getPipeline('inventory');
      expect(await inventory.execute(() => 'ok')).toBe('ok');
      await expect(inventory.execute(failing)).rejects.toThrow('inventory down');
      expect(await client.keys(`billing-${run}:cb:*`)).toEqual([`billing-${run}:cb:{inventory/circuit-breaker}`]);
    } finally {
      await orders.close();
      await billing.close();
    }
  });

  it('is required where the working directory has no package.json with a name: the start fails saying so', async () => {
    const error = await startIn(appFolder()).then(
      (moduleRef) => moduleRef.close(),
      (failure: unknown) => failure,
    );
    expect(error).toBeInstanceOf(ResilienceValidationError);
    expect((error as ResilienceValidationError).issues).toEqual([
      {
        path: 'store.redis.keyPrefix',
        value: undefined,
        rule: expect.stringMatching(/^is required: there is no package\.json with a "name" in the working directory/),
      },
    ]);
    const given = await startIn(appFolder(), { keyPrefix: 'orders-api' });
    await given.close();
  });

  it('is the same default for the stores made without Nest, which require it too where there is no name', () => {
    process.chdir(appFolder('orders-api'));
    expect(new RedisCircuitBreakerStateStore({ client }).keyFor('inventory/circuit-breaker')).toBe(
      'orders-api:cb:{inventory/circuit-breaker}',
    );
    process.chdir(appFolder());
    const limit = { kind: 'token-bucket', tokenLimit: 1, tokensPerPeriod: 1, replenishmentPeriod: 1_000 } as const;
    for (const create of [
      () => new RedisCircuitBreakerStateStore({ client }),
      () => new RedisRateLimiter({ client, name: 'api', limit }),
    ]) {
      expect(create).toThrow(ResilienceValidationError);
      expect(create).toThrow(/keyPrefix: undefined is required/);
    }
  });
});
