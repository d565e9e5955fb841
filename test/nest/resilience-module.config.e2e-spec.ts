import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import { Controller, Get, Injectable, Module } from '@nestjs/common';
import { APP_INTERCEPTOR } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { CapturingLogger } from '../utils/capturing.logger.js';
import request from 'supertest';
import {
  BrokenCircuitError,
  CircuitBreaker,
  Fallback,
  ResilienceInterceptor,
  ResilienceModule,
  ResiliencePipelineRegistry,
  ResilienceValidationError,
  Retry,
  AttemptTimeout,
  UnknownPipelineError,
  UseResiliencePipeline,
} from '../../src/index.js';

@Injectable()
class Settings {
  readonly retries = 4;
}

@Module({ providers: [Settings], exports: [Settings] })
class SettingsModule {}

async function startWith(imports: unknown[], providers: unknown[] = [], controllers: unknown[] = []) {
  const moduleRef = await Test.createTestingModule({
    imports: imports as never[],
    providers: providers as never[],
    controllers: controllers as never[],
  }).compile();
  const logger = new CapturingLogger();
  const app = moduleRef.createNestApplication({ logger });
  await app.init();
  return { app, logger };
}

async function startError(imports: unknown[], providers: unknown[] = []): Promise<Error> {
  try {
    const { app } = await startWith(imports, providers);
    await app.close();
  } catch (error) {
    return error as Error;
  }
  throw new Error('the application started');
}

describe('ResilienceModule configuration', () => {
  it('registers named pipelines from forRootAsync with injected configuration, and from forFeature', async () => {
    @Module({ imports: [ResilienceModule.forFeature({ inventory: { timeout: 1_000 } })] })
    class InventoryModule {}

    const { app } = await startWith([
      ResilienceModule.forRootAsync({
        imports: [SettingsModule],
        inject: [Settings],
        useFactory: (settings: Settings) => ({
          pipelines: { orders: { retry: { maxRetryAttempts: settings.retries, delay: 0 } } },
        }),
      }),
      InventoryModule,
    ]);
    const registry = app.get(ResiliencePipelineRegistry);
    expect(registry.pipelineNames).toEqual(['inventory', 'orders']);
    let calls = 0;
    await expect(
      registry.getPipeline('orders').execute(() => {
        if (++calls < 5) throw new Error('again');
        return 'done';
      }),
    ).resolves.toBe('done');
    expect(() => registry.getPipeline('payments')).toThrow(UnknownPipelineError);
    expect(() => registry.getPipeline('payments')).toThrow(
      'No resilience pipeline is named "payments". Known pipelines: "inventory", "orders".',
    );
    expect(registry.tryGetPipeline('payments')).toBeUndefined();
    await app.close();
  });

  it('fails the start with one error listing every problem of every pipeline', async () => {
    const error = await startError([
      ResilienceModule.forRoot({
        pipelines: {
          orders: {
            retry: { maxRetryAttempts: -1, shouldHandle: 'transiant-network' },
            circuitBreaker: { kind: 'consecutive', failureRatio: 0.5 },
          },
          payments: { timeout: 0, retryy: {} } as never,
        },
      }),
    ]);
    expect(error).toBeInstanceOf(ResilienceValidationError);
    const issues = (error as ResilienceValidationError).issues.map((i) => `${i.path}: ${i.rule}`);
    expect(issues).toEqual([
      expect.stringMatching(
        /^pipelines\.orders\.retry\.shouldHandle: is not a registered predicate \(did you mean "transient-network"\?; known: all-errors, http-failure, http-retryable, http-transient, overload, timeout, transient-network\)$/,
      ),
      'pipelines.orders.retry.maxRetryAttempts: must be an integer >= 0',
      'pipelines.orders.circuitBreaker.failureRatio: applies only to kind "time-window" or "count-window" or "slow-call", not "consecutive"',
      'pipelines.payments.retryy: is not a known option (did you mean "retry"?)',
      'pipelines.payments.timeout.timeout: must be a number > 0 and <= 2147483647',
    ]);
    expect(error.message).toContain('Invalid resilience configuration (5 problems)');
  });

  it('resolves predicates registered by the application', async () => {
    const { app } = await startWith([
      ResilienceModule.forRoot({
        predicates: { 'teapot-only': ({ outcome }) => !outcome.ok && (outcome.error as Error).message === 'teapot' },
        pipelines: { brew: { retry: { delay: 0, shouldHandle: 'teapot-only' } } },
      }),
    ]);
    const pipeline = app.get(ResiliencePipelineRegistry).getPipeline('brew');
    let calls = 0;
    await expect(
      pipeline.execute(() => Promise.reject(new Error(++calls === 1 ? 'teapot' : 'kettle'))),
    ).rejects.toThrow('kettle');
    expect(calls).toBe(2);
    await app.close();
  });

  it('fails the start for a missing fallback method, a wrong arity and an unknown pipeline name, all at once', async () => {
    @Injectable()
    class Broken {
      @Fallback('nope')
      async a(id: string): Promise<string> {
        return id;
      }

      @Fallback('twoArgs')
      async b(): Promise<string> {
        return 'b';
      }

      twoArgs(x: unknown, y: unknown): string {
        return `${String(x)}${String(y)}`;
      }

      @Retry('missing')
      async c(): Promise<string> {
        return 'c';
      }

      @CircuitBreaker('orders')
      async d(): Promise<string> {
        return 'd';
      }
    }
    const error = await startError([ResilienceModule.forRoot({ pipelines: { orders: { retry: {} } } })], [Broken]);
    expect(error).toBeInstanceOf(ResilienceValidationError);
    expect(error.message).toContain('Broken.a.@Fallback: "nope" is not a method of Broken');
    expect(error.message).toContain(
      'Broken.b.@Fallback: "twoArgs" must take the 0 argument(s) of b plus the error, or the error alone; it takes 2',
    );
    expect(error.message).toContain('Broken.c.@Retry: "missing" is not a registered pipeline (known: orders)');
    expect(error.message).toContain(
      'Broken.d.@CircuitBreaker: "orders" names a pipeline without a "circuitBreaker" section',
    );
  });

  it('logs the resolved pipeline of each decorated method at debug level', async () => {
    @Injectable()
    class Logged {
      @AttemptTimeout(1_000)
      @Retry({ maxRetryAttempts: 1 })
      @Fallback({ value: 0 })
      async work(): Promise<number> {
        return 1;
      }
    }
    const { app, logger } = await startWith([ResilienceModule.forRoot({})], [Logged]);
    expect(logger.debugs).toContain('Logged.work: Fallback(value) → Retry(inline) → AttemptTimeout(inline) → work');
    await app.close();
  });

  it('gives each key its own pipeline instance and circuit', async () => {
    const { app } = await startWith([
      ResilienceModule.forRoot({
        pipelines: { hosts: { circuitBreaker: { kind: 'consecutive', failureThreshold: 1 } } },
      }),
    ]);
    const registry = app.get(ResiliencePipelineRegistry);
    await registry
      .getPipeline('hosts', 'a.example')
      .execute(() => Promise.reject(new Error('a down')))
      .catch(() => undefined);
    await expect(registry.getPipeline('hosts', 'a.example').execute(() => 'a')).rejects.toBeInstanceOf(
      BrokenCircuitError,
    );
    await expect(registry.getPipeline('hosts', 'b.example').execute(() => 'b')).resolves.toBe('b');
    expect(registry.getPipeline('hosts', 'a.example')).toBe(registry.getPipeline('hosts', 'a.example'));
    await app.close();
  });

  it('reloads a pipeline: holders switch to the new options and the circuit keeps its state', async () => {
    const { app } = await startWith([
      ResilienceModule.forRoot({
        pipelines: { orders: { circuitBreaker: { kind: 'consecutive', failureThreshold: 1, breakDuration: 60_000 } } },
      }),
    ]);
    const registry = app.get(ResiliencePipelineRegistry);
    const held = registry.getPipeline('orders');
    await held.execute(() => Promise.reject(new Error('down'))).catch(() => undefined);
    await registry.reload('orders', {
      retry: { maxRetryAttempts: 2, delay: 0, retryOnBrokenCircuit: false },
      circuitBreaker: { kind: 'consecutive', failureThreshold: 5, breakDuration: 60_000 },
    });
    await expect(held.execute(() => 'x')).rejects.toBeInstanceOf(BrokenCircuitError);
    await registry.circuitControl('orders').close();
    let calls = 0;
    await expect(
      held.execute(() => {
        if (++calls < 3) throw new Error('flaky');
        return 'reloaded';
      }),
    ).resolves.toBe('reloaded');
    await expect(registry.reload('orders', { retry: { maxRetryAttempts: -5 } })).rejects.toThrow(
      ResilienceValidationError,
    );
    await app.close();
  });

  it('applies a default pipeline to every handler through a global interceptor, and can leave errors unmapped', async () => {
    let calls = 0;
    @Controller()
    class Plain {
      @Get('flaky')
      flaky(): string {
        if (++calls < 3) throw new Error('flaky');
        return 'ok';
      }

      @Get('open')
      @UseResiliencePipeline('breaker')
      open(): string {
        throw new Error('always');
      }
    }
    const moduleRef = await Test.createTestingModule({
      imports: [
        ResilienceModule.forRoot({
          httpErrorMapping: false,
          defaultInterceptorPipeline: 'web',
          pipelines: {
            web: { retry: { maxRetryAttempts: 3, delay: 0 } },
            breaker: { circuitBreaker: { kind: 'consecutive', failureThreshold: 1 } },
          },
        }),
      ],
      controllers: [Plain],
      providers: [{ provide: APP_INTERCEPTOR, useExisting: ResilienceInterceptor }],
    }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    await request(app.getHttpServer()).get('/flaky').expect(200).expect('ok');
    await request(app.getHttpServer()).get('/open').expect(500);
    await request(app.getHttpServer()).get('/open').expect(500); // BrokenCircuitError, but mapping is off
    await app.close();
  });
});
