import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Controller, Get, type INestApplication } from '@nestjs/common';
import { HealthCheck, HealthCheckService } from '@nestjs/terminus';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import type { App } from 'supertest/types.js';
import { ResilienceModule, ResiliencePipelineRegistry, ResilienceValidationError } from '../../src/index.js';
import { ResilienceHealthIndicator, ResilienceHealthModule } from '../../src/nest/terminus/index.js';
import { FakeTimeProvider } from '../../src/testing/index.js';

@Controller('health')
class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly resilience: ResilienceHealthIndicator,
  ) {}

  @Get()
  @HealthCheck()
  check() {
    return this.health.check([() => this.resilience.isHealthy('resilience')]);
  }

  @Get('lenient')
  @HealthCheck()
  lenient() {
    return this.health.check([() => this.resilience.isHealthy('resilience', { down: ['isolated'], pipelines: {} })]);
  }
}

describe('ResilienceHealthIndicator with Terminus', () => {
  let app: INestApplication<App>;
  let registry: ResiliencePipelineRegistry;
  const time = new FakeTimeProvider(Date.now());
  const fail = () => Promise.reject(new Error('down'));

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        ResilienceModule.forRoot({
          logging: false,
          timeProvider: time,
          pipelines: {
            payments: { circuitBreaker: { kind: 'consecutive', failureThreshold: 2, breakDuration: 10_000 } },
            search: { circuitBreaker: { kind: 'consecutive', failureThreshold: 1, breakDuration: 10_000 } },
          },
        }),
        // payments is critical: open means down. Other circuits: open is degraded, isolated is down.
        ResilienceHealthModule.forRoot({ pipelines: { payments: { down: ['open', 'half-open', 'isolated'] } } }),
      ],
      controllers: [HealthController],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    registry = app.get(ResiliencePipelineRegistry);
    await registry.getPipeline('payments').execute(() => 'ok');
    await registry.getPipeline('search').execute(() => 'ok');
  });

  afterAll(async () => {
    await app.close();
  });

  it('reports up while every circuit is closed, with each circuit in the details', async () => {
    const res = await request(app.getHttpServer()).get('/health').expect(200);
    expect(res.body).toMatchObject({
      status: 'ok',
      info: {
        resilience: {
          status: 'up',
          circuits: {
            payments: { status: 'up', state: 'closed', failureRatio: 0 },
            search: { status: 'up', state: 'closed' },
          },
        },
      },
    });
  });

  it('reports degraded (still 200) when a non-critical circuit opens', async () => {
    await registry.getPipeline('search').executeOutcome(fail);
    const res = await request(app.getHttpServer()).get('/health').expect(200);
    expect(res.body.details.resilience).toMatchObject({
      status: 'degraded',
      circuits: { search: { status: 'degraded', state: 'open', retryAfter: 10_000 } },
    });
  });

  it('reports down (503) when the critical circuit opens, and up again once it has closed', async () => {
    await registry.getPipeline('payments').executeOutcome(fail);
    await registry.getPipeline('payments').executeOutcome(fail);
    const down = await request(app.getHttpServer()).get('/health').expect(503);
    expect(down.body).toMatchObject({
      status: 'error',
      error: { resilience: { status: 'down', circuits: { payments: { status: 'down', state: 'open' } } } },
    });
    // A check may use its own rules: here only isolation counts as down.
    await request(app.getHttpServer()).get('/health/lenient').expect(200);

    time.advance(10_000);
    await registry.getPipeline('payments').execute(() => 'ok'); // the probe closes it
    await registry.getPipeline('search').execute(() => 'ok');
    const up = await request(app.getHttpServer()).get('/health').expect(200);
    expect(up.body.info.resilience).toMatchObject({
      status: 'up',
      circuits: { payments: { state: 'closed' }, search: { state: 'closed' } },
    });
  });

  it('reports down when a circuit is isolated by hand', async () => {
    await registry.isolateCircuit('search');
    await request(app.getHttpServer()).get('/health').expect(503);
    await registry.closeCircuit('search');
    await request(app.getHttpServer()).get('/health').expect(200);
  });

  it('rejects invalid rules at start-up with every problem listed', () => {
    let error: unknown;
    try {
      ResilienceHealthModule.forRoot({
        down: ['broken' as never],
        pipelines: { payments: { degraded: 'open' as never } },
        include: 'payments' as never,
      });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ResilienceValidationError);
    expect((error as ResilienceValidationError).issues.map((i) => i.path)).toEqual([
      'health.down',
      'health.pipelines.payments.degraded',
      'health.include',
    ]);
  });
});
