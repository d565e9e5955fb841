import 'reflect-metadata';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { Injectable, Module, type INestApplication } from '@nestjs/common';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { lastValueFrom, toArray } from 'rxjs';
import { request as httpRequest } from 'node:http';
import request from 'supertest';
import type { App } from 'supertest/types.js';
import {
  BrokenCircuitError,
  CircuitBreakerStateProvider,
  ResilienceModule,
  ResiliencePipelineRegistry,
  Retry,
} from '../../src/index.js';
import { FakeTimeProvider } from '../../src/testing/index.js';
import { CatalogService, Upstream, UpstreamError } from '../fixtures/resilient-app/catalog.service.js';
import { CatalogController } from '../fixtures/resilient-app/catalog.controller.js';
import { ResilientAppModule } from '../fixtures/resilient-app/resilient-app.module.js';

for (const platform of ['express', 'fastify'] as const) {
  describe(`ResilienceModule decorators and HTTP mapping (${platform})`, () => {
    let app: INestApplication<App>;
    let upstream: Upstream;
    let catalog: CatalogService;
    let baseUrl: string;
    const time = new FakeTimeProvider(Date.now());

    /** Lets the event loop turn until `condition` holds (bounded; no timers involved). */
    async function until(condition: () => boolean): Promise<void> {
      for (let i = 0; i < 1_000 && !condition(); i++) await new Promise((r) => setImmediate(r));
      expect(condition()).toBe(true);
    }

    beforeAll(async () => {
      const moduleRef = await Test.createTestingModule({
        imports: [ResilientAppModule.register({ timeProvider: time })],
      }).compile();
      app =
        platform === 'express'
          ? moduleRef.createNestApplication({ logger: false })
          : moduleRef.createNestApplication<NestFastifyApplication>(new FastifyAdapter(), { logger: false });
      await app.listen(0, '127.0.0.1');
      baseUrl = (await app.getUrl()).replace('[::1]', '127.0.0.1');
      upstream = app.get(Upstream);
      catalog = app.get(CatalogService);
    });

    afterAll(async () => {
      await app.close();
    });

    beforeEach(() => upstream.reset());

    it('retries a decorated handler and keeps its route, pipe, guard, header and metadata working', async () => {
      upstream.failuresLeft = 2;
      const res = await request(app.getHttpServer()).get('/catalog/products/7').expect(200);
      expect(res.body).toEqual({ id: 7, type: 'number', body: 'product 7 ok' });
      expect(res.headers['x-catalog']).toBe('yes');
      expect(upstream.calls).toBe(3);
      // Swagger reads its metadata from the handler: the wrapper carries it.
      const handler = Object.getOwnPropertyDescriptor(CatalogController.prototype, 'product')!.value as () => unknown;
      expect(Reflect.getMetadata('swagger/apiOperation', handler)).toMatchObject({ summary: 'Get a product' });
      expect(handler.name).toBe('product');
    });

    it('still runs the guard (403) and the pipe (400) before the pipeline', async () => {
      await request(app.getHttpServer()).get('/catalog/forbidden').expect(403);
      await request(app.getHttpServer()).get('/catalog/products/abc').expect(400);
      expect(upstream.calls).toBe(0);
    });

    it("answers an open circuit with 503 and Retry-After, keeping the handler's own status code otherwise", async () => {
      await request(app.getHttpServer()).post('/catalog/orders').expect(202);
      upstream.failuresLeft = 5;
      await request(app.getHttpServer()).post('/catalog/orders').expect(500);
      await request(app.getHttpServer()).post('/catalog/orders').expect(500);
      const res = await request(app.getHttpServer()).post('/catalog/orders').expect(503);
      expect(res.headers['retry-after']).toBe('30');
      expect(res.body).toMatchObject({ statusCode: 503, error: 'Service Unavailable' });
      expect(upstream.calls).toBe(3);
    });

    it('answers a timeout with 504', async () => {
      upstream.hang = true;
      const response = request(app.getHttpServer())
        .get('/catalog/slow')
        .then((r) => r);
      await until(() => upstream.calls === 1);
      time.advance(50);
      const res = await response;
      expect(res.status).toBe(504);
      expect(res.body).toMatchObject({ statusCode: 504, error: 'Gateway Timeout' });
      expect(upstream.lastSignal?.aborted).toBe(true);
    });

    it('aborts the context signal when the client disconnects', async () => {
      upstream.hang = true;
      const client = httpRequest(`${baseUrl}/catalog/hang`);
      client.on('error', () => undefined);
      client.end();
      await until(() => upstream.calls === 1);
      expect(upstream.lastSignal?.aborted).toBe(false);
      client.destroy();
      await until(() => upstream.lastSignal?.aborted === true);
      expect((upstream.lastSignal?.reason as Error).message).toBe('The client closed the connection.');
    });

    it('runs a decorated controller through a decorated service', async () => {
      upstream.failuresLeft = 1;
      await request(app.getHttpServer()).get('/catalog/service/9').expect(200).expect('catalog-service:product 9 ok');
    });

    it('works for request-scoped providers', async () => {
      upstream.failuresLeft = 2;
      await request(app.getHttpServer()).get('/catalog/scoped').expect(200).expect('request-scoped ok');
      expect(upstream.calls).toBe(3);
    });

    it("runs whole handlers through the interceptor's pipeline", async () => {
      upstream.failuresLeft = 2;
      await request(app.getHttpServer()).get('/intercepted').expect(200).expect('intercepted ok');
      expect(upstream.calls).toBe(3);
    });

    if (platform === 'express') {
      describe('provider methods', () => {
        it('composes Fallback → Retry → CircuitBreaker → Timeout whatever the written order, keeping `this`', async () => {
          upstream.failuresLeft = 2;
          await expect(catalog.product('1')).resolves.toBe('catalog-service:product 1 ok');
          expect(upstream.calls).toBe(3);
          upstream.reset();
          upstream.failuresLeft = 10;
          await expect(catalog.product('2')).resolves.toBe('cached 2 (UpstreamError)');
          expect(upstream.calls).toBe(3);
        });

        it('shares one named circuit between every method and the pipeline of that name', async () => {
          const registry = app.get(ResiliencePipelineRegistry);
          await registry.circuitControl('catalog').close(); // earlier tests opened it
          upstream.failuresLeft = 3;
          for (let i = 0; i < 3; i++) await expect(catalog.stock('x')).rejects.toBeInstanceOf(UpstreamError);
          await expect(catalog.stock('x')).rejects.toBeInstanceOf(BrokenCircuitError);
          // The method with its own fallback sees the same open circuit (and falls back without a call).
          upstream.reset();
          await expect(catalog.product('3')).resolves.toBe('cached 3 (BrokenCircuitError)');
          await expect(registry.getPipeline('catalog').execute(() => 'direct')).rejects.toBeInstanceOf(
            BrokenCircuitError,
          );
          expect(upstream.calls).toBe(0);
          await registry.circuitControl('catalog').close();
          await expect(catalog.stock('y')).resolves.toBe('stock y ok');
        });

        it('retries synchronous methods (returning a promise)', async () => {
          upstream.failuresLeft = 2;
          await expect(catalog.price('p')).resolves.toBe('price p');
        });

        it('re-subscribes an Observable-returning method on each attempt and emits every value', async () => {
          upstream.failuresLeft = 1;
          const values = await lastValueFrom(catalog.reviews('r').pipe(toArray()));
          expect(values).toEqual(['review 1 of r', 'review 2 of r']);
          expect(upstream.calls).toBe(2);
        });

        it('falls back to a fixed value', async () => {
          upstream.failuresLeft = 5;
          await expect(catalog.recommendations()).resolves.toBe('no recommendations');
          expect(upstream.calls).toBe(2);
        });
      });
    }
  });
}

describe('ResilienceModule without a started application', () => {
  it('runs a decorated method as it is when no module has bound it (e.g. new Service() in a unit test)', async () => {
    const upstream = new Upstream();
    upstream.failuresLeft = 1;
    const service = new CatalogService(upstream);
    await expect(service.stock('x')).rejects.toBeInstanceOf(UpstreamError);
    expect(upstream.calls).toBe(1);
  });

  it('keeps the state provider API usable for breakers the registry builds by code', async () => {
    const provider = new CircuitBreakerStateProvider();
    const registry = new ResiliencePipelineRegistry();
    const pipeline = registry.getOrAddPipeline('byCode', (b) =>
      b.addCircuitBreaker({ kind: 'consecutive', failureThreshold: 1, stateProvider: provider }),
    );
    await expect(pipeline.execute(() => Promise.reject(new Error('x')))).rejects.toThrow('x');
    expect(provider.circuitState).toBe('open');
    await registry.dispose();
  });
});

describe('ResilienceModule.forRoot() without options', () => {
  it('starts with the defaults: decorators with inline options run, and feature pipelines are served', async () => {
    let calls = 0;
    @Injectable()
    class Flaky {
      constructor(readonly registry: ResiliencePipelineRegistry) {}

      @Retry({ maxRetryAttempts: 2, delay: 0 })
      load(): Promise<string> {
        calls++;
        return calls < 3 ? Promise.reject(new Error('transient')) : Promise.resolve('loaded');
      }
    }
    // A feature module that does not import ResilienceModule: forRoot() is global by default.
    @Module({ providers: [Flaky], exports: [Flaky] })
    class FlakyModule {}
    const moduleRef = await Test.createTestingModule({
      imports: [ResilienceModule.forRoot(), ResilienceModule.forFeature({ orders: { timeout: '1s' } }), FlakyModule],
    }).compile();
    const app = await moduleRef.createNestApplication({ logger: false }).init();
    try {
      await expect(app.get(Flaky).load()).resolves.toBe('loaded');
      expect(calls).toBe(3);
      expect(app.get(Flaky).registry).toBe(app.get(ResiliencePipelineRegistry));
      const registry = app.get(ResiliencePipelineRegistry);
      expect(
        registry
          .getPipeline('orders')
          .describe()
          .map((s) => s.type),
      ).toEqual(['timeout']);
    } finally {
      await app.close();
    }
  });
});
