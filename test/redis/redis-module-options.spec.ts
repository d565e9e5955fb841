import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import { Test } from '@nestjs/testing';
import { ResilienceModule, ResiliencePipelineRegistry, ResilienceValidationError } from '../../src/index.js';
import { CIRCUIT_BREAKER_STATE_STORE } from '../../src/nest/index.js';
import type { RedisStoreConfig } from '../../src/nest/options/resilience-module-options.interface.js';

/** Starts an application with these options; returns the start-up error. */
async function startWith(redis: RedisStoreConfig): Promise<unknown> {
  try {
    const moduleRef = await Test.createTestingModule({
      imports: [ResilienceModule.forRoot({ store: { redis } })],
    }).compile();
    await moduleRef.close();
    return undefined;
  } catch (error) {
    return error;
  }
}

describe('store.redis options', () => {
  it('fail at start-up with one error listing every problem, secrets redacted', async () => {
    const error = await startWith({
      url: 'redis://127.0.0.1:6379',
      cluster: ['127.0.0.1:7000', 'not-an-address'],
      name: 'primary',
      password: 42 as unknown as string,
      operationTimeout: 0,
      outageMode: 'panic' as 'local',
      localCacheTtl: -1,
      colour: 'blue',
    } as RedisStoreConfig);
    expect(error).toBeInstanceOf(ResilienceValidationError);
    const { issues, message } = error as ResilienceValidationError;
    expect(issues.map((i) => i.path).sort()).toEqual(
      [
        'store.redis.colour',
        'store.redis.url + cluster',
        'store.redis.cluster[1]',
        'store.redis.name',
        'store.redis.password',
        'store.redis.operationTimeout',
        'store.redis.outageMode',
        'store.redis.localCacheTtl',
      ].sort(),
    );
    expect(message).toMatch(/^Invalid Redis store options \(8 problems\):/);
    expect(message).toContain('needs exactly one of url, cluster, sentinels (with name) or client');
    expect(message).not.toContain('42');
  });

  it('need a place: one of url, cluster, sentinels with a name, or a client', async () => {
    const none = (await startWith({ keyPrefix: 'app' })) as ResilienceValidationError;
    expect(none).toBeInstanceOf(ResilienceValidationError);
    expect(none.issues.map((i) => i.path)).toEqual(['store.redis.url']);
    const sentinels = (await startWith({ sentinels: [{ host: '127.0.0.1', port: 0 }] })) as ResilienceValidationError;
    expect(sentinels.issues.map((i) => i.path)).toEqual(['store.redis.sentinels[0]', 'store.redis.name']);
    const client = (await startWith({ client: {} as RedisStoreConfig['client'] })) as ResilienceValidationError;
    expect(client.issues.map((i) => [i.path, i.rule])).toEqual([
      ['store.redis.client', 'must be an ioredis Redis or Cluster client'],
    ]);
  });

  it('do not stop the start when Redis cannot be reached yet: the stores use their outage mode', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        ResilienceModule.forRoot({
          store: { redis: { url: 'redis://127.0.0.1:1', outageMode: 'allow' } },
          pipelines: { api: { circuitBreaker: { kind: 'consecutive', failureThreshold: 1 } } },
        }),
      ],
    }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    try {
      const pipeline = app.get(ResiliencePipelineRegistry).getPipeline('api');
      expect(await pipeline.execute(() => 'ok')).toBe('ok');
      await expect(pipeline.execute(() => Promise.reject(new Error('down')))).rejects.toThrow('down');
      expect(await pipeline.execute(() => 'still allowed')).toBe('still allowed');
      expect(app.get<{ isDegraded: boolean }>(CIRCUIT_BREAKER_STATE_STORE).isDegraded).toBe(true);
    } finally {
      await app.close();
    }
  });
});
