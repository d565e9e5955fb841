import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import type { App } from 'supertest/types.js';
import { connectWeatherRpc } from '../../sample-app/rpc/weather-rpc.bootstrap.js';
import { WEATHER_RPC_CONFIG } from '../../sample-app/rpc/weather-rpc.config.js';
import { FlakyUpstreamServer } from '../../sample-app/upstream/flaky-upstream.server.js';
import { startSample } from '../e2e/sample-app.fixture.js';
import { freePort } from './rpc-transports.js';

describe('sample app: the weather service over TCP, through the resilient client', () => {
  let app: INestApplication<App>;
  let upstream: FlakyUpstreamServer;

  beforeAll(async () => {
    const port = await freePort();
    // In-memory circuits (startSample unsets REDIS_URL): no other test file's calls reach these circuits.
    app = await startSample(undefined, {
      override: (builder) => builder.overrideProvider(WEATHER_RPC_CONFIG).useValue({ host: '127.0.0.1', port }),
      beforeInit: (created) => connectWeatherRpc(created).then(() => undefined),
    });
    upstream = app.get(FlakyUpstreamServer);
  });

  afterAll(async () => {
    await app.close();
  });

  it("retries the upstream's 503s that the RPC handler passes on, until it answers", async () => {
    const before = upstream.requestCount;
    const res = await request(app.getHttpServer()).get('/rpc/weather/lisbon').expect(200);
    expect(res.body).toEqual({ city: 'lisbon', temperature: 21, sky: 'clear' });
    expect(upstream.requestCount - before).toBe(3);
  });

  it("passes the upstream's status on when the retries run out, then fails fast once the circuit opens", async () => {
    let before = upstream.requestCount;
    await request(app.getHttpServer()).get('/rpc/weather/atlantis').expect(503);
    expect(upstream.requestCount - before).toBe(4);
    // The fifth failure in a row opens the client's circuit: its next retry is rejected, not sent.
    before = upstream.requestCount;
    await request(app.getHttpServer()).get('/rpc/weather/atlantis').expect(503);
    expect(upstream.requestCount - before).toBe(1);
    before = upstream.requestCount;
    const res = await request(app.getHttpServer()).get('/rpc/weather/lisbon').expect(503);
    expect(res.headers['retry-after']).toBe('5');
    expect(upstream.requestCount).toBe(before);
  });
});
