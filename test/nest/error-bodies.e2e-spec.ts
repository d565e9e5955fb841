import 'reflect-metadata';
import { afterEach, describe, expect, it } from '@jest/globals';
import { Controller, Get, Inject, type INestApplication, type LoggerService } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import {
  CircuitBreaker,
  IsolatedCircuitError,
  RateLimit,
  AttemptTimeout,
  toResilienceHttpError,
  ResilienceModule,
  ResiliencePipelineRegistry,
  type ResilienceModuleOptions,
} from '../../src/index.js';

const INTERNAL_URL = 'http://10.20.30.40:4010/internal/stock';

@Controller('stock')
class StockController {
  constructor(@Inject(ResiliencePipelineRegistry) private readonly registry: ResiliencePipelineRegistry) {}

  /** One circuit per upstream URL: the circuit key carries the internal address. */
  @Get()
  read(): Promise<string> {
    return this.registry
      .getPipeline<string>('inventory', INTERNAL_URL)
      .execute(() => Promise.reject(new Error('down')));
  }

  @Get('inline')
  @CircuitBreaker({ kind: 'consecutive', failureThreshold: 1, circuitKey: 'tenant-42/secret-shard-7' })
  async inline(): Promise<string> {
    throw new Error('down');
  }

  @Get('slow')
  @AttemptTimeout({ timeout: 20, mode: 'aggressive' })
  slow(): Promise<string> {
    return new Promise(() => undefined);
  }

  @Get('limited')
  @RateLimit({ kind: 'fixed-window', permitLimit: 1, window: 60_000 })
  async limited(): Promise<string> {
    return 'ok';
  }
}

class RecordingLogger implements LoggerService {
  readonly debugs: string[] = [];
  log(): void {}
  error(): void {}
  warn(): void {}
  debug(message: unknown): void {
    this.debugs.push(String(message));
  }
}

let app: INestApplication | undefined;
afterEach(async () => {
  await app?.close();
  app = undefined;
});

async function start(options: Partial<ResilienceModuleOptions> = {}) {
  const moduleRef = await Test.createTestingModule({
    imports: [
      ResilienceModule.forRoot({
        pipelines: { inventory: { circuitBreaker: { kind: 'consecutive', failureThreshold: 1 } } },
        ...options,
      }),
    ],
    controllers: [StockController],
  }).compile();
  const logger = new RecordingLogger();
  app = moduleRef.createNestApplication({ logger });
  await app.init();
  return { server: app.getHttpServer() as Parameters<typeof request>[0], logger };
}

describe('public error bodies', () => {
  it('name the pipeline of an open circuit, never its key or URL; the detail goes to the debug log', async () => {
    const { server, logger } = await start();
    await request(server).get('/stock').expect(500);
    const res = await request(server).get('/stock').expect(503);
    expect(res.body).toEqual({
      statusCode: 503,
      error: 'Service Unavailable',
      message: 'The circuit of "inventory" is open.',
    });
    expect(JSON.stringify(res.body)).not.toContain('10.20.30.40');
    expect(logger.debugs.some((m) => m.includes(INTERNAL_URL) && m.includes('503'))).toBe(true);
  });

  it('never show a custom circuit key, and use the configured public name', async () => {
    const { server } = await start({ publicNames: { 'StockController.inline': 'stock service' } });
    await request(server).get('/stock/inline').expect(500);
    const res = await request(server).get('/stock/inline').expect(503);
    expect(res.body.message).toBe('The circuit of "stock service" is open.');
    expect(JSON.stringify(res.body)).not.toContain('secret-shard');
  });

  it('say the circuit is isolated, still without its key', async () => {
    const { server } = await start();
    await app!.get(ResiliencePipelineRegistry).circuitControl('inventory').isolate();
    const res = await request(server).get('/stock').expect(503);
    expect(res.body.message).toBe('The circuit of "inventory" is isolated.');
    expect(res.headers['retry-after']).toBeUndefined();
    expect(JSON.stringify(res.body)).not.toContain('10.20.30.40');
  });

  it('say which pipeline did not answer in time for a 504', async () => {
    const { server } = await start({ publicNames: { 'StockController.slow': 'stock' } });
    const res = await request(server).get('/stock/slow').expect(504);
    expect(res.body).toEqual({ statusCode: 504, error: 'Gateway Timeout', message: '"stock" did not answer in time.' });
  });

  it('keep the HTTP mapping of an isolated circuit: 503 without Retry-After', () => {
    expect(toResilienceHttpError(new IsolatedCircuitError())).toEqual({
      status: 503,
      error: 'Service Unavailable',
      retryAfterSeconds: undefined,
    });
  });

  it('say what limited the call for a 429', async () => {
    const { server } = await start({ publicNames: { 'StockController.limited': 'stock' } });
    await request(server).get('/stock/limited').expect(200);
    const res = await request(server).get('/stock/limited').expect(429);
    expect(res.body).toEqual({
      statusCode: 429,
      error: 'Too Many Requests',
      message: 'The rate limit of "stock" is reached.',
    });
  });
});
