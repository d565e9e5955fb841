import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import type { App } from 'supertest/types.js';
import { RESILIENCE_METRICS } from '../../src/opentelemetry/index.js';
import { SampleConfigFile, startSample, type ResilienceDocument } from './sample-app.fixture.js';

describe('sample app: /health (Terminus, with the circuits) and /metrics (Prometheus)', () => {
  const config = new SampleConfigFile((doc: ResilienceDocument) => {
    doc.pipelines.weather.retry = { ...(doc.pipelines.weather.retry as object), delay: 0 };
    doc.pipelines.weather.circuitBreaker = {
      ...(doc.pipelines.weather.circuitBreaker as object),
      failureThreshold: 3,
      breakDuration: '1m',
    };
  });
  let app: INestApplication<App>;
  let server: App;

  beforeAll(async () => {
    app = await startSample(config);
    server = app.getHttpServer();
  });

  afterAll(async () => {
    await app.close();
    config.dispose();
  });

  it('is up (200) while every circuit is closed', async () => {
    await request(server).get('/weather/lisbon').expect(200);
    const res = await request(server).get('/health').expect(200);
    expect(res.body).toMatchObject({ status: 'ok', info: { resilience: { status: 'up' } } });
    expect(res.body.info.resilience.circuits.weather).toMatchObject({ status: 'up', state: 'closed' });
  });

  it('shows the library’s metrics after a few weather calls, with Polly’s names and tags', async () => {
    for (const city of ['lisbon', 'porto', 'madrid']) await request(server).get(`/weather/${city}`).expect(200);
    const res = await request(server).get('/metrics').expect(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    const text = res.text;
    const prom = (name: string) => name.replace(/\./g, '_');
    // Prometheus names a counter with `_total`.
    expect(text).toContain(`# TYPE ${prom(RESILIENCE_METRICS.strategyEvents)}_total counter`);
    expect(text).toMatch(
      new RegExp(
        `${prom(RESILIENCE_METRICS.strategyEvents)}_total\\{pipeline_name="weather",[^}]*event_name="OnRetry"[^}]*\\} \\d+`,
      ),
    );
    expect(text).toContain(`# TYPE ${prom(RESILIENCE_METRICS.attemptDuration)} histogram`);
    expect(text).toContain(`# TYPE ${prom(RESILIENCE_METRICS.pipelineDuration)} histogram`);
    expect(text).toMatch(
      new RegExp(`${prom(RESILIENCE_METRICS.circuitState)}\\{[^}]*circuit_state="closed"[^}]*\\} 1`),
    );
  });

  it('is down (503) naming the circuit once it opens, and the metrics show it open', async () => {
    await request(server).get('/weather/atlantis/strict').expect(503);
    const res = await request(server).get('/health').expect(503);
    expect(res.body).toMatchObject({ status: 'error', error: { resilience: { status: 'down' } } });
    expect(res.body.error.resilience.circuits.weather).toMatchObject({
      status: 'down',
      state: 'open',
      retryAfter: expect.any(Number),
    });
    const metrics = await request(server).get('/metrics').expect(200);
    expect(metrics.text).toMatch(
      new RegExp(
        `${RESILIENCE_METRICS.circuitState.replace(/\./g, '_')}\\{[^}]*pipeline_name="weather"[^}]*circuit_state="open"[^}]*\\} 1`,
      ),
    );
    expect(metrics.text).toMatch(/event_name="OnCircuitOpened"/);
  });
});
