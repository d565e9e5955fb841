// #region health-probes
import 'reflect-metadata';
import { Controller, Get, Module } from '@nestjs/common';
import { HealthCheck, HealthCheckService, TerminusModule } from '@nestjs/terminus';
import { ResilienceModule } from '../../src/index.js';
import { ResilienceHealthIndicator, ResilienceHealthModule } from '../../src/nest/terminus/index.js';

@Controller('health')
export class ProbesController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly resilience: ResilienceHealthIndicator,
  ) {}

  /** Liveness: is the process itself working? Never a dependency — a restart heals none. */
  @Get('live')
  @HealthCheck()
  live() {
    return this.health.check([]);
  }

  /** Readiness: should the load balancer send this instance traffic now? */
  @Get('ready')
  @HealthCheck()
  ready() {
    return this.health.check([() => this.resilience.isHealthy('resilience')]);
  }
}

@Module({
  imports: [
    TerminusModule,
    ResilienceModule.forRoot({
      pipelines: {
        ledger: { circuitBreaker: { kind: 'consecutive', failureThreshold: 3, breakDuration: 30_000 } },
        recommendations: { circuitBreaker: { kind: 'consecutive', failureThreshold: 3, breakDuration: 30_000 } },
      },
    }),
    ResilienceHealthModule.forRoot({
      // Only a circuit an operator isolated takes the instance out of rotation. Open and half-open
      // degrade (still 200): the call that ends a break has to be able to arrive.
      down: ['isolated'],
      degraded: ['open', 'half-open'],
    }),
  ],
  controllers: [ProbesController],
})
export class ProbesModule {}
// #endregion health-probes

import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import type { App } from 'supertest/types.js';
import { RESILIENCE_TIME_PROVIDER, ResiliencePipelineRegistry } from '../../src/index.js';
import { FakeTimeProvider } from '../../src/testing/index.js';

describe('liveness and readiness probes (docs/observability.md)', () => {
  let app: INestApplication<App>;
  let registry: ResiliencePipelineRegistry;
  const time = new FakeTimeProvider(Date.now());
  const fail = () => Promise.reject(new Error('down'));
  const openCircuit = async (name: string) => {
    for (let i = 0; i < 3; i++) await registry.getPipeline(name).executeOutcome(fail);
  };

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({ imports: [ProbesModule] })
      .overrideProvider(RESILIENCE_TIME_PROVIDER)
      .useValue(time)
      .compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    registry = app.get(ResiliencePipelineRegistry);
    await registry.getPipeline('ledger').execute(() => 'ok');
    await registry.getPipeline('recommendations').execute(() => 'ok');
  });

  afterAll(async () => {
    await app.close();
  });

  const probe = (path: 'live' | 'ready') => request(app.getHttpServer()).get(`/health/${path}`);

  it('an open circuit keeps the instance ready (degraded, 200); liveness stays up', async () => {
    await openCircuit('ledger');
    const ready = await probe('ready').expect(200);
    expect(ready.body.info.resilience).toMatchObject({
      status: 'degraded',
      circuits: { ledger: { status: 'degraded', state: 'open' }, recommendations: { status: 'up' } },
    });
    expect((await probe('live').expect(200)).body).toEqual({ status: 'ok', info: {}, error: {}, details: {} });
  });

  it('counting open as down would keep the instance out: a circuit reads open until a call ends the break', async () => {
    const health = app.get(ResilienceHealthIndicator);
    const strict = { down: ['open' as const, 'isolated' as const], pipelines: {} };
    time.advance(30_000);
    // The break is over, but nothing called the pipeline: the circuit still reads open, due for a probe.
    const due = await health.isHealthy('resilience', strict);
    expect(due.resilience).toMatchObject({ status: 'down', circuits: { ledger: { state: 'open', retryAfter: 0 } } });
    // Only a call (traffic an unready instance does not get) takes it half-open, and its success closes it.
    await registry.getPipeline('ledger').execute(() => 'ok');
    expect((await health.isHealthy('resilience', strict)).resilience.status).toBe('up');
    await probe('ready').expect(200);
  });

  it('an isolated circuit makes it not ready (503); liveness stays up', async () => {
    await registry.isolateCircuit('recommendations');
    const ready = await probe('ready').expect(503);
    expect(ready.body.error.resilience.circuits.recommendations).toMatchObject({ status: 'down', state: 'isolated' });
    await probe('live').expect(200);
    await registry.closeCircuit('recommendations');
    await probe('ready').expect(200);
  });
});
