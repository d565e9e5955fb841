import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import type { App } from 'supertest/types.js';
import { ResilienceModule, ResiliencePipelineRegistry, type LimiterInfo } from '../../src/index.js';
import { ResilienceAdminModule } from '../../src/nest/admin/index.js';
import { FakeTimeProvider } from '../../src/testing/index.js';

/** A refusal as an HTTP client reports it. */
const refused = () => Promise.reject(Object.assign(new Error('Service Unavailable'), { status: 503 }));

describe('adaptive throttling in the admin API', () => {
  let app: INestApplication<App>;
  let registry: ResiliencePipelineRegistry;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        ResilienceModule.forRoot({
          logging: false,
          timeProvider: new FakeTimeProvider(1_000_000),
          // A random source that never draws under the probabilities reached here: nothing is throttled.
          pipelines: { pricing: { adaptiveThrottling: { k: 2, window: 10_000, random: () => 0.99 } } },
        }),
        ResilienceAdminModule.forRoot({ unprotected: true }),
      ],
    }).compile();
    app = moduleRef.createNestApplication<INestApplication<App>>({ logger: false });
    await app.init();
    registry = app.get(ResiliencePipelineRegistry);
  });

  afterAll(async () => {
    await app.close();
  });

  const limiters = async (): Promise<LimiterInfo[]> =>
    (await request(app.getHttpServer()).get('/resilience/limiters').expect(200)).body as LimiterInfo[];

  it('lists the strategy with its requests, accepts and reject probability, as they move', async () => {
    const pipeline = registry.getPipeline('pricing');
    for (let i = 0; i < 3; i++) await pipeline.execute(refused).catch(() => undefined);
    expect(await limiters()).toEqual([
      {
        pipelineName: 'pricing',
        section: 'adaptiveThrottling',
        kind: 'adaptive-throttling',
        queueLength: 0,
        distributed: false,
        rejections: 0,
        // (3 − 2 × 0) / (3 + 1)
        throttle: { requests: 3, accepts: 0, rejectProbability: 0.75, k: 2, window: 10_000 },
      },
    ]);

    await pipeline.execute(() => 'ok');
    // (4 − 2 × 1) / (4 + 1)
    expect((await limiters())[0].throttle).toEqual({
      requests: 4,
      accepts: 1,
      rejectProbability: 0.4,
      k: 2,
      window: 10_000,
    });
  });
});
