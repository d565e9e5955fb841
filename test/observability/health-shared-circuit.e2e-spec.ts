import 'reflect-metadata';
import { HealthController } from './health.fixture.js';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Controller, Injectable, Module, Post, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { TerminusModule } from '@nestjs/terminus';
import { CircuitBreaker, ResilienceModule, ResiliencePipelineRegistry } from '../../src/index.js';
import { ResilienceHealthModule } from '../../src/nest/terminus/index.js';

/** Two methods naming the circuit breaker of the pipeline `payments`: they share its one circuit. */
@Injectable()
class PaymentsClient {
  @CircuitBreaker('payments')
  async charge(): Promise<string> {
    return 'charged';
  }

  @CircuitBreaker('payments')
  async refund(): Promise<string> {
    throw new Error('refunds upstream down');
  }
}

@Controller('payments')
class PaymentsController {
  constructor(private readonly payments: PaymentsClient) {}

  @Post('charge')
  charge(): Promise<string> {
    return this.payments.charge();
  }

  @Post('refund')
  refund(): Promise<string> {
    return this.payments.refund();
  }
}

@Module({
  imports: [
    TerminusModule,
    ResilienceModule.forRoot({
      logging: false,
      pipelines: {
        payments: { circuitBreaker: { kind: 'consecutive', failureThreshold: 2, breakDuration: 60_000 } },
      },
    }),
    ResilienceHealthModule.forRoot({ pipelines: { payments: { down: ['open', 'isolated'] } } }),
  ],
  controllers: [PaymentsController, HealthController],
  providers: [PaymentsClient],
})
class AppModule {}

describe('one circuit of a named pipeline shared by decorated methods, as health and error bodies name it', () => {
  let app: INestApplication;
  let url: string;

  beforeAll(async () => {
    app = await NestFactory.create(AppModule, { logger: false, abortOnError: false });
    await app.listen(0, '127.0.0.1');
    url = await app.getUrl();
  });

  afterAll(async () => {
    await app.close();
  });

  it('lists it under "payments", opens it from refund() alone, reports 503 and names it in charge()\'s 503', async () => {
    const registry = app.get(ResiliencePipelineRegistry);
    expect((await fetch(`${url}/payments/charge`, { method: 'POST' })).status).toBe(201);
    expect((await fetch(`${url}/health`)).status).toBe(200);

    expect((await fetch(`${url}/payments/refund`, { method: 'POST' })).status).toBe(500);
    expect((await fetch(`${url}/payments/refund`, { method: 'POST' })).status).toBe(500);

    const circuits = await registry.circuits();
    expect(circuits).toEqual([expect.objectContaining({ pipelineName: 'payments', state: 'open' })]);
    const circuit = await registry.circuitState('payments');
    expect(circuit).toBeDefined();
    expect(circuit?.state).toBe('open');

    const health = await fetch(`${url}/health`);
    expect(health.status).toBe(503);
    expect(await health.json()).toMatchObject({
      status: 'error',
      error: { resilience: { status: 'down', circuits: { payments: { status: 'down', state: 'open' } } } },
    });

    const charge = await fetch(`${url}/payments/charge`, { method: 'POST' });
    expect(charge.status).toBe(503);
    expect(((await charge.json()) as { message: string }).message).toBe('The circuit of "payments" is open.');
  });
});
