import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import type { App } from 'supertest/types.js';
import { RESILIENCE_TIME_PROVIDER, ResiliencePipelineRegistry } from '../../src/index.js';
import { FakeTimeProvider } from '../../src/testing/index.js';
import { SAMPLE_ADMIN_CONFIG } from '../../sample-app/admin/sample-admin.guard.js';
import { pipelineRows } from '../../sample-app/startup/startup.banner.js';
import { OverloadController } from '../../sample-app/overload/overload.controller.js';
import { startSample } from './sample-app.fixture.js';

const TOKEN = 'overload-test-admin-token-0123';

describe('sample app: overload — adaptive concurrency, adaptive throttling, deadlines (docs/sample-app.md)', () => {
  const time = new FakeTimeProvider(Date.UTC(2026, 0, 1));
  let app: INestApplication<App>;
  let server: App;

  beforeAll(async () => {
    // The shipped file, as `npm start` reads it.
    app = await startSample(undefined, {
      override: (b) =>
        b
          .overrideProvider(RESILIENCE_TIME_PROVIDER)
          .useValue(time)
          .overrideProvider(SAMPLE_ADMIN_CONFIG)
          .useValue({ token: TOKEN }),
    });
    server = app.getHttpServer();
  });

  afterAll(async () => {
    await app.close();
  });

  it('runs the "overload" and "throttled" pipelines of the file, listed by the registry and the admin API', async () => {
    const registry = app.get(ResiliencePipelineRegistry);
    expect(registry.getPipeline('overload')).toBeDefined();
    expect(registry.getPipeline('throttled')).toBeDefined();
    const auth = { Authorization: `Bearer ${TOKEN}` };
    const pipelines = (await request(server).get('/resilience/pipelines').set(auth).expect(200)).body as {
      name: string;
      strategies: { type: string }[];
      options: Record<string, unknown>;
    }[];
    const sections = (name: string) => Object.keys(pipelines.find((p) => p.name === name)?.options ?? {});
    expect(sections('overload')).toEqual(['adaptiveConcurrency']);
    expect(sections('throttled')).toEqual(['adaptiveThrottling']);
    const types = (name: string) => pipelines.find((p) => p.name === name)?.strategies.map((s) => s.type);
    expect(types('overload')).toEqual(['adaptive-concurrency']);
    expect(types('throttled')).toEqual(['adaptive-throttling']);
    // The start-up table (docs/sample-app.md).
    const rows = pipelineRows(registry);
    expect(rows.find((r) => r.name === 'overload')?.strategies).toEqual(['adaptive-concurrency']);
    expect(rows.find((r) => r.name === 'throttled')?.strategies).toEqual(['adaptive-throttling']);
  });

  it('answers a default call and sheds a sheddable one (x-criticality or @WithCriticality) with 429', async () => {
    // curl -i http://127.0.0.1:3000/overload/orders
    const orders = await request(server).get('/overload/orders').expect(200);
    expect(orders.body).toEqual({ route: 'orders', served: true });
    // curl -i -H 'x-criticality: sheddable' http://127.0.0.1:3000/overload/orders
    const shed = await request(server).get('/overload/orders').set('x-criticality', 'sheddable').expect(429);
    expect(shed.body).toMatchObject({ statusCode: 429 });
    // curl -i http://127.0.0.1:3000/overload/report
    await request(server).get('/overload/report').expect(429);
    // curl -i -H 'x-criticality: critical' http://127.0.0.1:3000/overload/report
    const critical = await request(server).get('/overload/report').set('x-criticality', 'critical').expect(200);
    expect(critical.body).toEqual({ route: 'report', served: true });

    const auth = { Authorization: `Bearer ${TOKEN}` };
    const limiters = (await request(server).get('/resilience/limiters').set(auth).expect(200)).body as unknown;
    expect(JSON.stringify(limiters)).toContain('"section":"adaptiveConcurrency"');
  });

  it('throttles calls to an upstream that refuses them: 503 from the upstream, then 429 before it', async () => {
    // for i in 1 2 … 10; do curl -s -o /dev/null -w '%{http_code} ' http://127.0.0.1:3000/overload/weather/atlantis; done
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) statuses.push((await request(server).get('/overload/weather/atlantis')).status);
    expect(statuses[0]).toBe(503);
    expect(statuses.every((s) => s === 503 || s === 429)).toBe(true);
    expect(statuses).toContain(429);
  });

  it('answers 504 before the handler runs when the budget is spent, and hands a budget to the handler', async () => {
    const controller = app.get(OverloadController);
    const before = controller.budgetCalls;
    // curl -i -H 'x-request-deadline-ms: 0' http://127.0.0.1:3000/overload/budget
    const spent = await request(server).get('/overload/budget').set('x-request-deadline-ms', '0').expect(504);
    expect(spent.body).toEqual({
      statusCode: 504,
      error: 'Gateway Timeout',
      message: "The caller's deadline has passed.",
    });
    expect(controller.budgetCalls).toBe(before);
    // curl -s -H 'x-request-deadline-ms: 1500' http://127.0.0.1:3000/overload/budget
    await request(server).get('/overload/budget').set('x-request-deadline-ms', '1500').expect(200, { budgetMs: 1500 });
    // curl -s -H 'grpc-timeout: 2S' http://127.0.0.1:3000/overload/budget
    await request(server).get('/overload/budget').set('grpc-timeout', '2S').expect(200, { budgetMs: 2000 });
    // curl -s http://127.0.0.1:3000/overload/budget
    await request(server).get('/overload/budget').expect(200, { budgetMs: null });
    expect(controller.budgetCalls).toBe(before + 3);
  });
});
