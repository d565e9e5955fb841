import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Controller, Get, Query, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import type { App } from 'supertest/types.js';
import {
  AdaptiveConcurrencyLimit,
  ResilienceModule,
  ResiliencePipelineRegistry,
  WithCriticality,
} from '../../src/index.js';
import { CapturingLogger } from '../utils/capturing.logger.js';
import { deferred } from '../utils/flaky.js';

const gate = { current: deferred<void>(), started: 0 };

@Controller()
class CatalogController {
  @Get('items')
  @AdaptiveConcurrencyLimit('catalog')
  @WithCriticality('sheddable')
  async items(@Query('q') q: string): Promise<{ q: string }> {
    gate.started++;
    await gate.current.promise;
    return { q };
  }
}

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !condition(); i++) await new Promise((r) => setImmediate(r));
  expect(condition()).toBe(true);
}

describe('@AdaptiveConcurrencyLimit and criticality on HTTP routes', () => {
  let app: INestApplication<App>;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        ResilienceModule.forRoot({
          // As a configuration file gives them: strings.
          pipelines: { catalog: { adaptiveConcurrency: { initialLimit: '2', sheddableRatio: '0.5' } } },
        }),
      ],
      controllers: [CatalogController],
    }).compile();
    app = moduleRef.createNestApplication({ logger: new CapturingLogger() });
    await app.init();
  });

  afterAll(async () => {
    await app.close();
  });

  it('sheds a sheddable route call first; the x-criticality header overrides @WithCriticality', async () => {
    const server = app.getHttpServer();
    gate.current = deferred<void>();
    gate.started = 0;
    const critical = request(server)
      .get('/items?q=a')
      .set('x-criticality', 'critical')
      .then((r) => r);
    await until(() => gate.started === 1);
    // One of two in flight: a sheddable call may fill half of the limit, no more.
    const shed = await request(server).get('/items?q=b').expect(429);
    expect(shed.body).toMatchObject({ statusCode: 429, error: 'Too Many Requests' });
    const byDefault = request(server)
      .get('/items?q=c')
      .set('X-Criticality', ' Default ')
      .then((r) => r);
    await until(() => gate.started === 2);
    await request(server).get('/items?q=d').set('x-criticality', 'critical').expect(429); // the limit is full
    gate.current.resolve();
    expect((await critical).body).toEqual({ q: 'a' });
    expect((await byDefault).body).toEqual({ q: 'c' });
    expect(app.get(ResiliencePipelineRegistry).limiterStatistics()).toEqual([
      expect.objectContaining({
        pipelineName: 'catalog',
        section: 'adaptiveConcurrency',
        kind: 'adaptive-gradient2',
        permitLimit: 2,
        permitsInUse: 0,
        rejections: 2,
      }),
    ]);
  });
});
