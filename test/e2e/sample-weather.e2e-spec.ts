import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import type { App } from 'supertest/types.js';
import { FlakyUpstreamServer } from '../../sample-app/upstream/flaky-upstream.server.js';
import { SampleConfigFile, startSample, withoutRetryDelays } from './sample-app.fixture.js';

describe('sample app: the weather pipeline from the resilience file', () => {
  let app: INestApplication<App>;
  let upstream: FlakyUpstreamServer;
  const config = new SampleConfigFile((doc) => {
    withoutRetryDelays(doc);
    doc.pipelines.weather.circuitBreaker = {
      ...(doc.pipelines.weather.circuitBreaker as object),
      failureThreshold: 6,
      breakDuration: '1m',
    };
  });

  beforeAll(async () => {
    app = await startSample(config);
    upstream = app.get(FlakyUpstreamServer);
  });

  afterAll(async () => {
    await app.close();
    config.dispose();
  });

  it('retries the flaky upstream until it answers', async () => {
    const before = upstream.requestCount;
    const res = await request(app.getHttpServer()).get('/weather/lisbon').expect(200);
    expect(res.body).toEqual({ city: 'lisbon', temperature: 21, sky: 'clear', source: 'live' });
    expect(upstream.requestCount - before).toBe(3);
  });

  it('serves the gateway route through the resilient HTTP client (retried until the upstream answers)', async () => {
    const before = upstream.requestCount;
    const res = await request(app.getHttpServer()).get('/gateway/forecast/porto').expect(200);
    expect(res.body).toEqual({ city: 'porto', temperature: 21, sky: 'clear' });
    expect(upstream.requestCount - before).toBeGreaterThanOrEqual(1);
  });

  it('runs a whole controller through the interceptor pipeline', async () => {
    const res = await request(app.getHttpServer()).get('/upstream/status').expect(200);
    expect(res.body.status).toBe('reachable');
  });

  it('falls back after the last retry fails', async () => {
    const before = upstream.requestCount;
    const res = await request(app.getHttpServer()).get('/weather/atlantis').expect(200);
    expect(res.body).toEqual({ city: 'atlantis', temperature: null, sky: 'unknown', source: 'fallback' });
    expect(upstream.requestCount - before).toBe(4);
  });

  it('opens the shared circuit: the strict route answers 503 with Retry-After, without calling the upstream', async () => {
    // 4 failures above + 2 here reach the threshold of 6 in a row: the circuit opens during this request,
    // its next retry is rejected by the open circuit (not retried), and the client gets 503.
    let before = upstream.requestCount;
    await request(app.getHttpServer()).get('/weather/atlantis/strict').expect(503);
    expect(upstream.requestCount - before).toBe(2);
    before = upstream.requestCount;
    const res = await request(app.getHttpServer()).get('/weather/lisbon/strict').expect(503);
    expect(res.headers['retry-after']).toBe('60');
    expect(upstream.requestCount).toBe(before);
    // The route with a fallback still answers, from the fallback.
    await request(app.getHttpServer())
      .get('/weather/lisbon')
      .expect(200)
      .expect((r) => expect(r.body.source).toBe('fallback'));
  });
});
