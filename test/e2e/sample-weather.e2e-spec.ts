import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import type { App } from 'supertest/types.js';
import { AppModule } from '../../sample-app/app.module.js';
import { FlakyUpstreamServer } from '../../sample-app/upstream/flaky-upstream.server.js';
import { WEATHER_OPTIONS } from '../../sample-app/weather/weather.options.js';

describe('sample app: weather through fallback → retry → timeout', () => {
  let app: INestApplication<App>;
  let upstream: FlakyUpstreamServer;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] })
      .overrideProvider(WEATHER_OPTIONS)
      .useValue({ maxRetryAttempts: 3, retryDelay: 0, attemptTimeout: 5_000 })
      .compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    upstream = app.get(FlakyUpstreamServer);
  });

  afterAll(async () => {
    await app.close();
  });

  it('retries the flaky upstream until it answers', async () => {
    const before = upstream.requestCount;
    const res = await request(app.getHttpServer()).get('/weather/lisbon').expect(200);
    expect(res.body).toEqual({ city: 'lisbon', temperature: 21, sky: 'clear', source: 'live' });
    expect(upstream.requestCount - before).toBe(3);
  });

  it('falls back after the last retry fails', async () => {
    const before = upstream.requestCount;
    const res = await request(app.getHttpServer()).get('/weather/atlantis').expect(200);
    expect(res.body).toEqual({ city: 'atlantis', temperature: null, sky: 'unknown', source: 'fallback' });
    expect(upstream.requestCount - before).toBe(4);
  });
});
