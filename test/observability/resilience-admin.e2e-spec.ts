import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Injectable, type CanActivate, type ExecutionContext, type INestApplication } from '@nestjs/common';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { get as httpGet, type IncomingMessage } from 'node:http';
import request from 'supertest';
import type { App } from 'supertest/types.js';
import { ResilienceModule, ResiliencePipelineRegistry, ResilienceValidationError } from '../../src/index.js';
import { ResilienceAdminModule, ResilienceEventStream, type PipelineStatistics } from '../../src/nest/admin/index.js';
import { FakeTimeProvider } from '../../src/testing/index.js';

/** The app's own guard: an operator token in a header. */
@Injectable()
class OperatorGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const req = context.switchToHttp().getRequest<{ headers: Record<string, string | undefined> }>();
    return req.headers['x-operator'] === 'yes';
  }
}

class DenyAll implements CanActivate {
  canActivate(): boolean {
    return false;
  }
}

const fail = () => Promise.reject(new Error('connect ECONNREFUSED 10.0.0.7:5432'));

async function start(admin: Parameters<typeof ResilienceAdminModule.forRoot>[0], time: FakeTimeProvider) {
  const moduleRef = await Test.createTestingModule({
    imports: [
      ResilienceModule.forRoot({
        logging: false,
        timeProvider: time,
        pipelines: {
          payments: {
            retry: { maxRetryAttempts: 1, delay: 0, name: 'payments-retry' },
            circuitBreaker: { kind: 'consecutive', failureThreshold: 2, breakDuration: 30_000 },
            timeout: 2_000,
          },
          search: { concurrencyLimiter: { permitLimit: 4, queueLimit: 2 } },
          chaos: {
            fallback: { fallbackValue: 'cached', shouldHandle: () => true },
            chaosFault: { injectionRate: 0, fault: { apiKey: 'sk-live-123', detail: 'injected' } },
          },
        },
      }),
      ResilienceAdminModule.forRoot(admin),
    ],
  }).compile();
  const app = moduleRef.createNestApplication<INestApplication<App>>({ logger: false });
  await app.listen(0, '127.0.0.1');
  return app;
}

describe('ResilienceAdminModule behind a guard that denies', () => {
  let app: INestApplication<App>;
  beforeAll(async () => {
    app = await start({ guards: [DenyAll], control: true, dashboard: true }, new FakeTimeProvider(0));
    await app
      .get(ResiliencePipelineRegistry)
      .getPipeline('payments')
      .execute(() => 'ok');
  });
  afterAll(async () => {
    await app.close();
  });

  it('answers 403 on every route and leaks nothing', async () => {
    const routes: [string, string][] = [
      ['get', '/resilience'],
      ['get', '/resilience/pipelines'],
      ['get', '/resilience/circuits'],
      ['get', '/resilience/circuits/payments'],
      ['get', '/resilience/limiters'],
      ['get', '/resilience/stats'],
      ['get', '/resilience/events'],
      ['get', '/resilience/events/recent'],
      ['get', '/resilience/dashboard'],
      ['get', '/resilience/dashboard.js'],
      ['post', '/resilience/circuits/payments/isolate'],
      ['post', '/resilience/circuits/payments/close'],
    ];
    for (const [method, path] of routes) {
      const res = await (method === 'get'
        ? request(app.getHttpServer()).get(path)
        : request(app.getHttpServer()).post(path));
      expect([path, res.status]).toEqual([path, 403]);
      expect(res.text).not.toMatch(/payments|circuit|ECONNREFUSED|10\.0\.0\.7|closed|open/i);
    }
    // Nothing was changed by the refused POST.
    expect((await app.get(ResiliencePipelineRegistry).circuitState('payments'))!.state).toBe('closed');
  });
});

describe('ResilienceAdminModule with the app guard', () => {
  let app: INestApplication<App>;
  let registry: ResiliencePipelineRegistry;
  const time = new FakeTimeProvider(1_000_000);
  const operator = (req: request.Test) => req.set('x-operator', 'yes');

  beforeAll(async () => {
    app = await start(
      {
        path: '/ops/resilience/',
        guards: [OperatorGuard],
        control: true,
        events: { bufferSize: 8 },
        heartbeatInterval: 30,
      },
      time,
    );
    registry = app.get(ResiliencePipelineRegistry);
  });
  afterAll(async () => {
    await app.close();
  });

  it('serves under the configured path only, to requests the guard admits', async () => {
    await request(app.getHttpServer()).get('/ops/resilience/circuits').expect(403);
    await request(app.getHttpServer()).get('/resilience/circuits').set('x-operator', 'yes').expect(404);
    const info = await operator(request(app.getHttpServer()).get('/ops/resilience')).expect(200);
    expect(info.body).toEqual({ control: true, dashboard: false, fleet: false });
    await operator(request(app.getHttpServer()).get('/ops/resilience/dashboard')).expect(404);
  });

  it('lists pipelines with their strategies in execution order and their options', async () => {
    const res = await operator(request(app.getHttpServer()).get('/ops/resilience/pipelines')).expect(200);
    const chaos = res.body.find((p: { name: string }) => p.name === 'chaos');
    expect(chaos).toEqual({
      name: 'chaos',
      strategies: [{ type: 'fallback' }, { type: 'chaos-fault' }],
      options: {
        fallback: { fallbackValue: 'cached', shouldHandle: '[function]' },
        chaosFault: { injectionRate: 0, fault: { apiKey: '[redacted]', detail: 'injected' } },
      },
    });
    res.body = res.body.filter((p: { name: string }) => p.name !== 'chaos');
    expect(res.body).toEqual([
      {
        name: 'payments',
        strategies: [{ type: 'retry', name: 'payments-retry' }, { type: 'circuit-breaker' }, { type: 'timeout' }],
        options: {
          retry: { maxRetryAttempts: 1, delay: 0, name: 'payments-retry' },
          circuitBreaker: { kind: 'consecutive', failureThreshold: 2, breakDuration: 30_000 },
          timeout: 2_000,
        },
      },
      {
        name: 'search',
        strategies: [{ type: 'concurrency-limiter' }],
        options: { concurrencyLimiter: { permitLimit: 4, queueLimit: 2 } },
      },
    ]);
    expect(JSON.stringify(res.body)).not.toContain('sk-live-123');
  });

  it('reads circuits and limiters', async () => {
    await registry.getPipeline('payments').executeOutcome(fail); // two failed attempts: opens
    await registry.getPipeline('search').execute(() => 'ok');
    const circuits = await operator(request(app.getHttpServer()).get('/ops/resilience/circuits')).expect(200);
    expect(circuits.body).toEqual([
      expect.objectContaining({ pipelineName: 'payments', state: 'open', kind: 'consecutive', retryAfter: 30_000 }),
    ]);
    const one = await operator(request(app.getHttpServer()).get('/ops/resilience/circuits/payments')).expect(200);
    expect(one.body).toMatchObject({ pipelineName: 'payments', state: 'open', failures: 2, threshold: 2 });
    await operator(request(app.getHttpServer()).get('/ops/resilience/circuits/search')).expect(404);
    const limiters = await operator(request(app.getHttpServer()).get('/ops/resilience/limiters')).expect(200);
    expect(limiters.body).toEqual([
      expect.objectContaining({
        pipelineName: 'search',
        kind: 'concurrency',
        permitLimit: 4,
        permitsInUse: 0,
        queueLength: 0,
      }),
    ]);
    const stats = await operator(request(app.getHttpServer()).get('/ops/resilience/stats')).expect(200);
    expect(stats.body).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ pipelineName: 'payments', calls: 1, failures: 1, rejections: 0 }),
        expect.objectContaining({ pipelineName: 'search', calls: 1, failures: 0 }),
      ]),
    );
    // Per operation key (none here: "(none)"), and five minutes in 5-second steps for the charts.
    const payments = (stats.body as PipelineStatistics[]).find((s) => s.pipelineName === 'payments')!;
    expect(payments.operations).toEqual([expect.objectContaining({ operationKey: '(none)', calls: 1, failures: 1 })]);
    expect(payments.series.step).toBe(5);
    expect(payments.series.calls).toHaveLength(60);
    expect(payments.series.calls.reduce((a, b) => a + b, 0)).toBe(1);
    expect(payments.series.failures.reduce((a, b) => a + b, 0)).toBe(1);
    // The opening is in the circuit's history.
    const history = await operator(request(app.getHttpServer()).get('/ops/resilience/history')).expect(200);
    expect(history.body).toEqual([
      expect.objectContaining({ pipelineName: 'payments', changes: [expect.objectContaining({ state: 'open' })] }),
    ]);
  });

  it('isolates and closes a circuit, and 404s a name without one', async () => {
    const isolated = await operator(
      request(app.getHttpServer()).post('/ops/resilience/circuits/payments/isolate'),
    ).expect(200);
    expect(isolated.body).toEqual([expect.objectContaining({ pipelineName: 'payments', state: 'isolated' })]);
    const closed = await operator(request(app.getHttpServer()).post('/ops/resilience/circuits/payments/close')).expect(
      200,
    );
    expect(closed.body).toEqual([expect.objectContaining({ state: 'closed', failures: 0 })]);
    await expect(registry.getPipeline('payments').execute(() => 'ok')).resolves.toBe('ok');
    await operator(request(app.getHttpServer()).post('/ops/resilience/circuits/search/isolate')).expect(404);
  });

  it('answers 404 naming the closest pipeline for a name that is no pipeline, and drives nothing', async () => {
    for (const [method, path] of [
      ['get', '/ops/resilience/circuits/paymnts'],
      ['post', '/ops/resilience/circuits/paymnts/isolate'],
      ['post', '/ops/resilience/circuits/paymnts/close'],
    ] as const) {
      const res = await operator(request(app.getHttpServer())[method](path)).expect(404);
      expect(res.body).toEqual({
        statusCode: 404,
        error: 'Not Found',
        message: 'No resilience pipeline or decorated method is named "paymnts" (did you mean "payments"?).',
      });
    }
    const far = await operator(request(app.getHttpServer()).post('/ops/resilience/circuits/ledger/isolate')).expect(
      404,
    );
    expect(far.body.message).toBe('No resilience pipeline or decorated method is named "ledger".');
    // A pipeline without a circuit breaker is known: it still has no circuit to show.
    const search = await operator(request(app.getHttpServer()).get('/ops/resilience/circuits/search')).expect(404);
    expect(search.body.message).toBe('No circuit breaker of that name.');
    expect((await registry.circuitState('payments'))?.state).toBe('closed');
  });

  it('streams telemetry events to a client as server-sent events, without the per-call ones', async () => {
    const url = `${(await app.getUrl()).replace('[::1]', '127.0.0.1')}/ops/resilience/events`;
    const received: string[] = [];
    const res = await new Promise<IncomingMessage>((resolve, reject) =>
      httpGet(url, { headers: { 'x-operator': 'yes' } }, resolve).on('error', reject),
    );
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    res.setEncoding('utf8');
    let buffer = '';
    const events = new Promise<void>((resolve) => {
      res.on('data', (chunk: string) => {
        buffer += chunk;
        const frames = buffer.split('\n\n');
        buffer = frames.pop()!;
        for (const frame of frames) {
          if (frame.startsWith('event: ready')) {
            void registry.getPipeline('payments').executeOutcome(fail); // retry, then open
          } else if (frame.startsWith('event: resilience')) {
            received.push(JSON.parse(frame.split('data: ')[1]).eventName as string);
          } else if (frame === ': keep-alive') {
            received.push('keep-alive');
          }
          if (received.includes('OnRetryGiveUp') && received.includes('keep-alive')) resolve();
        }
      });
    });
    await events;
    res.destroy();
    expect(received.filter((e) => e !== 'keep-alive')).toEqual(['OnRetry', 'OnCircuitOpened', 'OnRetryGiveUp']);
    const stream = app.get(ResilienceEventStream);
    // The server sees the client go (a socket close: real time, bounded, however busy the machine).
    for (let waited = 0; stream.subscriberCount > 0 && waited < 10_000; waited += 20) {
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(stream.subscriberCount).toBe(0);
    const recent = await operator(request(app.getHttpServer()).get('/ops/resilience/events/recent')).expect(200);
    expect(recent.body.at(-2)).toMatchObject({
      eventName: 'OnCircuitOpened',
      pipelineName: 'payments',
      reason: 'failure-threshold',
      outcome: 'Error',
    });
    expect(JSON.stringify(recent.body)).not.toContain('10.0.0.7');
    await registry.closeCircuit('payments');
  });

  it('drops a client that falls behind instead of buffering without bound or slowing calls', async () => {
    const stream = app.get(ResilienceEventStream);
    const written: string[] = [];
    let ended = false;
    // A client whose socket never drains.
    stream.subscribe({ write: (c) => (written.push(c), false), once: () => undefined, end: () => (ended = true) });
    const before = stream.droppedCount;
    for (let i = 0; i < 20; i++) await registry.getPipeline('payments').executeOutcome(fail);
    await new Promise((r) => setImmediate(r));
    expect(ended).toBe(true);
    expect(stream.droppedCount).toBe(before + 1);
    expect(stream.subscriberCount).toBe(0);
    expect(written.length).toBeLessThanOrEqual(1);
    await registry.closeCircuit('payments');
  });
});

describe('ResilienceAdminModule options', () => {
  it('refuses to start without a guard unless told the API is meant to be open, listing every problem', () => {
    let error: unknown;
    try {
      ResilienceAdminModule.forRoot({
        path: '',
        control: 'yes' as never,
        heartbeatInterval: -1,
        guards: [{} as never],
      });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ResilienceValidationError);
    expect((error as ResilienceValidationError).issues.map((i) => i.path)).toEqual([
      'admin.path',
      'admin.control',
      'admin.heartbeatInterval',
      'admin.guards[0]',
    ]);
    expect(() => ResilienceAdminModule.forRoot({})).toThrow(/must list at least one guard/);
    expect(() => ResilienceAdminModule.forRoot({ unprotected: true })).not.toThrow();
  });

  it('serves the API without guards when unprotected: true', async () => {
    const app = await start({ unprotected: true }, new FakeTimeProvider(0));
    await request(app.getHttpServer()).get('/resilience/circuits').expect(200, []);
    await request(app.getHttpServer()).post('/resilience/circuits/payments/isolate').expect(403); // control is off
    await app.close();
  });
});

describe('ResilienceAdminModule on Fastify', () => {
  async function fastifyApp(guards: Parameters<typeof ResilienceAdminModule.forRoot>[0]) {
    const moduleRef = await Test.createTestingModule({
      imports: [
        ResilienceModule.forRoot({ logging: false, pipelines: { p: { retry: { maxRetryAttempts: 1, delay: 0 } } } }),
        ResilienceAdminModule.forRoot(guards),
      ],
    }).compile();
    const app = moduleRef.createNestApplication<NestFastifyApplication>(new FastifyAdapter(), { logger: false });
    await app.listen(0, '127.0.0.1');
    return { app, base: (await app.getUrl()).replace('[::1]', '127.0.0.1') };
  }

  it('serves the dashboard and streams events', async () => {
    const { app, base } = await fastifyApp({ unprotected: true, dashboard: true });
    const html = await fetch(`${base}/resilience/dashboard`);
    expect([html.status, html.headers.get('content-type')]).toEqual([200, 'text/html; charset=utf-8']);
    const res = await new Promise<IncomingMessage>((resolve, reject) =>
      httpGet(`${base}/resilience/events`, resolve).on('error', reject),
    );
    res.setEncoding('utf8');
    let text = '';
    await new Promise<void>((resolve) => {
      res.on('data', (chunk: string) => {
        const first = !text.includes('event: ready');
        text += chunk;
        if (first && text.includes('event: ready')) {
          void app.get(ResiliencePipelineRegistry).getPipeline('p').executeOutcome(fail);
        }
        if (text.includes('OnRetryGiveUp')) resolve();
      });
    });
    res.destroy();
    expect(text).toContain('"eventName":"OnRetry"');
    await app.close();
  });

  it('answers 403 to the event stream behind a denying guard', async () => {
    const { app, base } = await fastifyApp({ guards: [new DenyAll()] });
    const res = await fetch(`${base}/resilience/events`);
    expect(res.status).toBe(403);
    expect(await res.text()).not.toMatch(/event:|OnRetry/);
    await app.close();
  });
});
