import 'reflect-metadata';
import { HealthController } from './health.fixture.js';
import { afterEach, describe, expect, it } from '@jest/globals';
import { Injectable, Module, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { TerminusModule } from '@nestjs/terminus';
import {
  CircuitBreaker,
  ResilienceModule,
  ResiliencePipelineRegistry,
  ResilienceValidationError,
} from '../../src/index.js';
import {
  ResilienceHealthIndicator,
  ResilienceHealthModule,
  type ResilienceHealthOptions,
} from '../../src/nest/terminus/index.js';

/** A method with an inline circuit breaker: its pipeline is named `QuoteClient.fetch`. */
@Injectable()
class QuoteClient {
  @CircuitBreaker({ kind: 'consecutive', failureThreshold: 1, breakDuration: 60_000 })
  async fetch(): Promise<string> {
    throw new Error('quotes upstream down');
  }
}

/** The application as a user writes it: Terminus, the resilience module, the health module with `health`. */
function appModule(health: ResilienceHealthOptions): new () => object {
  @Module({
    imports: [
      TerminusModule,
      ResilienceModule.forRoot({
        logging: false,
        pipelines: {
          payments: { circuitBreaker: { kind: 'consecutive', failureThreshold: 2, breakDuration: 60_000 } },
          quotes: { circuitBreaker: { kind: 'consecutive', failureThreshold: 1, breakDuration: 60_000 } },
        },
      }),
      ResilienceHealthModule.forRoot(health),
    ],
    controllers: [HealthController],
    providers: [QuoteClient],
  })
  class AppModule {}
  return AppModule;
}

let app: INestApplication | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function start(health: ResilienceHealthOptions) {
  app = await NestFactory.create(appModule(health), { logger: false, abortOnError: false });
  await app.listen(0, '127.0.0.1');
  const url = await app.getUrl();
  const registry = app.get(ResiliencePipelineRegistry);
  const getHealth = async () => {
    const res = await fetch(`${url}/health`);
    return { status: res.status, body: (await res.json()) as Record<string, { resilience: unknown }> };
  };
  return { registry, getHealth };
}

/** Starts the application and returns the error it failed to start with. */
async function startFailure(health: ResilienceHealthOptions): Promise<ResilienceValidationError> {
  const created = await NestFactory.create(appModule(health), { logger: false, abortOnError: false });
  let error: unknown;
  try {
    await created.listen(0, '127.0.0.1');
    app = created;
  } catch (e) {
    error = e;
    await created.close().catch(() => undefined);
  }
  expect(error).toBeInstanceOf(ResilienceValidationError);
  return error as ResilienceValidationError;
}

const fail = () => Promise.reject(new Error('payments upstream down'));

describe('Terminus health rules and include lists by pipeline name', () => {
  it('a rule for "payments" makes /health 503 while its circuit is open or isolated', async () => {
    const { registry, getHealth } = await start({ pipelines: { payments: { down: ['open', 'isolated'] } } });
    const payments = registry.getPipeline('payments');
    await payments.execute(() => 'ok');
    expect((await getHealth()).status).toBe(200);

    await payments.executeOutcome(fail);
    await payments.executeOutcome(fail);
    const open = await getHealth();
    expect(open.status).toBe(503);
    expect(open.body.error.resilience).toMatchObject({
      status: 'down',
      circuits: { payments: { status: 'down', state: 'open' } },
    });

    await registry.closeCircuit('payments');
    expect((await getHealth()).status).toBe(200);
    await registry.isolateCircuit('payments');
    const isolated = await getHealth();
    expect(isolated.status).toBe(503);
    expect(isolated.body.error.resilience).toMatchObject({ circuits: { payments: { state: 'isolated' } } });
  });

  it('include: ["payments"] reports that circuit, open, and no other', async () => {
    const { registry, getHealth } = await start({ include: ['payments'] });
    await registry.getPipeline('quotes').execute(() => 'ok');
    await app!
      .get(QuoteClient)
      .fetch()
      .catch(() => undefined); // another circuit opens: not reported
    await registry.isolateCircuit('quotes'); // isolated is down by default: not reported either
    const payments = registry.getPipeline('payments');
    await payments.executeOutcome(fail);
    await payments.executeOutcome(fail);

    const res = await getHealth();
    expect(res.status).toBe(200); // open is degraded by default
    expect(res.body.info.resilience).toEqual({
      status: 'degraded',
      circuits: { payments: { status: 'degraded', state: 'open', failureRatio: 1, retryAfter: expect.any(Number) } },
    });
  });

  it('a method with inline decorators is named Class.method in rules and include lists', async () => {
    const { getHealth } = await start({
      include: ['QuoteClient.fetch'],
      pipelines: { 'QuoteClient.fetch': { down: ['open'] } },
    });
    expect(await getHealth()).toMatchObject({ status: 200 });
    await app!
      .get(QuoteClient)
      .fetch()
      .catch(() => undefined);
    const res = await getHealth();
    expect(res.status).toBe(503);
    expect(res.body.error.resilience).toEqual({
      status: 'down',
      circuits: { 'QuoteClient.fetch': expect.objectContaining({ status: 'down', state: 'open' }) },
    });
  });

  it('an unknown name in the rules or the include list fails the start, every one with a "did you mean"', async () => {
    const error = await startFailure({
      pipelines: { quotez: { down: ['open'] }, payments: { down: ['open'] } },
      include: ['payments', 'QuoteClient.fecth', 'ledger'],
    });
    expect(error.issues).toEqual([
      {
        path: 'health.pipelines.quotez',
        value: 'quotez',
        rule: expect.stringContaining('names no pipeline or decorated method (did you mean "quotes"?; known: '),
      },
      {
        path: 'health.include[1]',
        value: 'QuoteClient.fecth',
        rule: expect.stringContaining('(did you mean "QuoteClient.fetch"?; known: '),
      },
      { path: 'health.include[2]', value: 'ledger', rule: expect.not.stringContaining('did you mean') },
    ]);
    expect(error.issues[2].rule).toContain('known: QuoteClient.fetch, payments, quotes');
    expect(error.message).toContain('Invalid resilience health options (3 problems)');
  });

  it('rules given as anything but an object of rules by name are refused when the module is defined', () => {
    let error: unknown;
    try {
      ResilienceHealthModule.forRoot({ pipelines: 'payments' as never });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ResilienceValidationError);
    expect((error as ResilienceValidationError).issues).toEqual([
      { path: 'health.pipelines', value: 'payments', rule: 'must be an object of rules by pipeline name' },
    ]);
  });

  it('a check with its own rules naming an unknown pipeline throws the same error', async () => {
    await start({});
    const indicator = app!.get(ResilienceHealthIndicator);
    const error = await indicator.isHealthy('resilience', { include: ['paymnts'] }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ResilienceValidationError);
    expect((error as ResilienceValidationError).issues).toEqual([
      expect.objectContaining({ path: 'health.include[0]', rule: expect.stringContaining('did you mean "payments"?') }),
    ]);
  });
});
