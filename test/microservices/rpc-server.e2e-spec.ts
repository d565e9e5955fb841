import { afterEach, describe, expect, it } from '@jest/globals';
import {
  Controller,
  Get,
  Inject,
  Module,
  UseFilters,
  UseInterceptors,
  type DynamicModule,
  type INestApplication,
  type INestMicroservice,
  type LoggerService,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ClientProxyFactory, EventPattern, MessagePattern, Transport, type ClientProxy } from '@nestjs/microservices';
import { lastValueFrom } from 'rxjs';
import request from 'supertest';
import {
  BrokenCircuitError,
  RateLimiterRejectedError,
  TimeoutRejectedError,
  type ResilienceModuleOptions,
} from '../../src/index.js';
import {
  CircuitBreaker,
  ResilienceExceptionFilter,
  ResilienceInterceptor,
  ResilienceModule,
  Retry,
  UseResiliencePipeline,
} from '../../src/nest/index.js';
import { FakeTimeProvider } from '../../src/testing/index.js';
import { InventoryModule, InventoryState } from './inventory.fixture.js';
import { freePort, waitUntil } from './rpc-transports.js';

/** Keeps every error Nest logs. */
class ErrorLogger implements LoggerService {
  readonly errors: string[] = [];
  log(): void {}
  warn(): void {}
  debug(): void {}
  error(message: unknown, ...rest: unknown[]): void {
    this.errors.push(
      [message, ...rest].map((m) => (m instanceof Error ? `${m.name}: ${m.message}` : String(m))).join(' '),
    );
  }
}

const SHIPPING = Symbol('ShippingState');

class ShippingState {
  quoteFailures = 0;
  readonly calls: Record<string, number> = {};
  readonly events: unknown[] = [];
  count(name: string): number {
    return (this.calls[name] = (this.calls[name] ?? 0) + 1);
  }
}

/** Handlers that throw what a failing pipeline would. */
@Controller()
class RejectionsController {
  @MessagePattern('rejections.open')
  open(): never {
    throw new BrokenCircuitError('The circuit is open.', 2_500);
  }

  @MessagePattern('rejections.limited')
  limited(): never {
    throw new RateLimiterRejectedError('Too many quotes.', 1_200.4);
  }

  @MessagePattern('rejections.slow')
  slow(): never {
    throw new TimeoutRejectedError(100);
  }
}

/** Handlers run by the interceptor (the `shipping` pipeline), and one plain bug. */
@Controller()
@UseInterceptors(ResilienceInterceptor)
@UseResiliencePipeline('shipping')
class ShippingController {
  constructor(@Inject(SHIPPING) private readonly state: ShippingState) {}

  @MessagePattern('shipping.broken')
  broken(): never {
    this.state.count('shipping.broken');
    throw new Error('a plain bug');
  }

  /** Run through the `shipping` pipeline by `ResilienceInterceptor` (a retry). */
  @MessagePattern('shipping.quote')
  quote(): { price: number } {
    const n = this.state.count('shipping.quote');
    if (n <= this.state.quoteFailures) throw new Error(`carrier down (${n})`);
    return { price: 42 };
  }

  /** An event handler run by the interceptor: retried until it works. */
  @EventPattern('shipping.dispatched')
  dispatched(data: unknown): void {
    const n = this.state.count('shipping.dispatched');
    if (n === 1) throw new Error('ledger busy');
    this.state.events.push(data);
  }
}

/** Handlers with their own decorators; the exception filter bound on the controller too. */
@Controller()
@UseFilters(ResilienceExceptionFilter)
class LedgerController {
  constructor(@Inject(SHIPPING) private readonly state: ShippingState) {}

  @EventPattern('ledger.booked')
  @Retry({ maxRetryAttempts: 2, delay: 0 })
  booked(data: unknown): void {
    const n = this.state.count('ledger.booked');
    if (n < 3) throw new Error('ledger locked');
    this.state.events.push(data);
  }

  @Get('ledger/open')
  @MessagePattern('ledger.open')
  @CircuitBreaker({ kind: 'consecutive', failureThreshold: 1, breakDuration: 30_000 })
  openRoute(): never {
    this.state.count('ledger.open');
    throw new Error('ledger database down');
  }
}

function shippingModule(state: ShippingState, options: ResilienceModuleOptions = {}): DynamicModule {
  @Module({
    imports: [
      ResilienceModule.forRoot({
        pipelines: { shipping: { retry: { maxRetryAttempts: 2, delay: 0 } } },
        ...options,
      }),
    ],
    controllers: [RejectionsController, ShippingController, LedgerController],
    providers: [{ provide: SHIPPING, useValue: state }],
  })
  class ShippingModule {}
  return { module: ShippingModule };
}

describe('RPC handlers in a pure microservice app with ResilienceModule', () => {
  let server: INestMicroservice | undefined;
  let client: ClientProxy | undefined;
  let logger: ErrorLogger;
  let state: ShippingState;

  async function start(options?: ResilienceModuleOptions): Promise<ClientProxy> {
    const port = await freePort();
    logger = new ErrorLogger();
    state = new ShippingState();
    server = await NestFactory.createMicroservice(shippingModule(state, options), {
      transport: Transport.TCP,
      options: { host: '127.0.0.1', port },
      logger,
    });
    await server.listen();
    client = ClientProxyFactory.create({ transport: Transport.TCP, options: { host: '127.0.0.1', port } });
    return client;
  }

  afterEach(async () => {
    await Promise.resolve(client?.close());
    await server?.close();
    client = undefined;
    server = undefined;
  });

  const call = (c: ClientProxy, pattern: string) => lastValueFrom(c.send(pattern, {})).catch((e: unknown) => e);

  it('answers a handler behind an open circuit at once with the stable payload (no HTTP fallback)', async () => {
    const c = await start();
    await expect(call(c, 'rejections.open')).resolves.toEqual({
      status: 503,
      error: 'Service Unavailable',
      // The public message, not the error's own (which may name a circuit key or an address).
      message: 'A circuit is open.',
      retryAfter: 2_500,
    });
    await expect(call(c, 'rejections.limited')).resolves.toEqual({
      status: 429,
      error: 'Too Many Requests',
      message: 'A rate limit is reached.',
      retryAfter: 1_201,
    });
    await expect(call(c, 'rejections.slow')).resolves.toEqual({
      status: 504,
      error: 'Gateway Timeout',
      message: 'The operation did not answer in time.',
      retryAfter: null,
    });
    expect(logger.errors.join('\n')).not.toMatch(/isHeadersSent|TypeError/);
  });

  it("answers a plain error as Nest does, without the filter's TypeError", async () => {
    const c = await start();
    await expect(call(c, 'shipping.broken')).resolves.toEqual({ status: 'error', message: 'Internal server error' });
    expect(logger.errors.join('\n')).not.toMatch(/isHeadersSent|TypeError/);
  });

  it('with the mapping off, answers resilience rejections as unknown errors (and logs them)', async () => {
    const c = await start({ httpErrorMapping: false });
    await expect(call(c, 'rejections.open')).resolves.toEqual({ status: 'error', message: 'Internal server error' });
    expect(logger.errors.join('\n')).toMatch(/BrokenCircuitError: The circuit is open\./);
    expect(logger.errors.join('\n')).not.toMatch(/isHeadersSent|TypeError/);
  });

  it('runs @MessagePattern and @EventPattern handlers through ResilienceInterceptor (rpc context)', async () => {
    const c = await start();
    state.quoteFailures = 2;
    await expect(call(c, 'shipping.quote')).resolves.toEqual({ price: 42 });
    expect(state.calls['shipping.quote']).toBe(3);
    await lastValueFrom(c.emit('shipping.dispatched', { parcel: 7 }), { defaultValue: undefined });
    await waitUntil(() => state.events.length === 1, 'the event was handled');
    expect(state.calls['shipping.dispatched']).toBe(2);
  });

  it('runs method decorators on @EventPattern and @MessagePattern handlers', async () => {
    const c = await start();
    await lastValueFrom(c.emit('ledger.booked', { entry: 1 }), { defaultValue: undefined });
    await waitUntil(() => state.events.length === 1, 'the event was handled');
    expect(state.calls['ledger.booked']).toBe(3);
    await expect(call(c, 'ledger.open')).resolves.toEqual({ status: 'error', message: 'Internal server error' });
    const rejected = (await call(c, 'ledger.open')) as { status: number; retryAfter: number };
    expect(rejected).toMatchObject({ status: 503, error: 'Service Unavailable' });
    expect(rejected.retryAfter).toBeGreaterThan(29_000);
    expect(state.calls['ledger.open']).toBe(1);
  });

  it('retries inside a server-side @Retry on a message handler (the shared fixture)', async () => {
    const port = await freePort();
    const inventoryState = new InventoryState();
    inventoryState.decoratedFailures = 2;
    const inventory = await NestFactory.createMicroservice(
      InventoryModule.register(inventoryState, new FakeTimeProvider()),
      {
        transport: Transport.TCP,
        options: { host: '127.0.0.1', port },
        logger: false,
      },
    );
    await inventory.listen();
    const c = ClientProxyFactory.create({ transport: Transport.TCP, options: { host: '127.0.0.1', port } });
    try {
      await expect(lastValueFrom(c.send('inventory.decorated', {}))).resolves.toEqual({ decorated: 3 });
    } finally {
      c.close();
      await inventory.close();
    }
  });
});

describe('a hybrid app (HTTP + microservice) with ResilienceModule', () => {
  let app: INestApplication | undefined;
  let client: ClientProxy | undefined;
  let state: ShippingState;
  let logger: ErrorLogger;

  async function start(inheritAppConfig: boolean): Promise<ClientProxy> {
    const port = await freePort();
    state = new ShippingState();
    logger = new ErrorLogger();
    app = await NestFactory.create(shippingModule(state), { logger });
    app.connectMicroservice({ transport: Transport.TCP, options: { host: '127.0.0.1', port } }, { inheritAppConfig });
    await app.startAllMicroservices();
    await app.listen(0, '127.0.0.1');
    client = ClientProxyFactory.create({ transport: Transport.TCP, options: { host: '127.0.0.1', port } });
    return client;
  }

  afterEach(async () => {
    await Promise.resolve(client?.close());
    await app?.close();
    app = undefined;
    client = undefined;
  });

  it('answers RPC with the payload and HTTP with 503 + Retry-After, from the same handler', async () => {
    const c = await start(true);
    // The first failure opens the circuit; then both sides see it open.
    await expect(lastValueFrom(c.send('ledger.open', {}))).rejects.toEqual({
      status: 'error',
      message: 'Internal server error',
    });
    const rpc = await lastValueFrom(c.send('ledger.open', {})).catch((e: unknown) => e);
    expect(rpc).toMatchObject({ status: 503, error: 'Service Unavailable' });
    const http = await request(app!.getHttpServer()).get('/ledger/open');
    expect(http.status).toBe(503);
    expect(http.headers['retry-after']).toBe('30');
    expect(http.body).toMatchObject({ statusCode: 503, error: 'Service Unavailable' });

    await expect(lastValueFrom(c.send('rejections.open', {}))).rejects.toMatchObject({
      status: 503,
      retryAfter: 2_500,
    });
    state.quoteFailures = 1;
    await expect(lastValueFrom(c.send('shipping.quote', {}))).resolves.toEqual({ price: 42 });
    expect(state.calls['shipping.quote']).toBe(2);
    expect(logger.errors.join('\n')).not.toMatch(/isHeadersSent|TypeError/);
  });

  it("without inheritAppConfig the global filter stays with HTTP: @UseFilters maps RPC, others get Nest's answer at once", async () => {
    const c = await start(false);
    await expect(lastValueFrom(c.send('rejections.open', {}))).rejects.toEqual({
      status: 'error',
      message: 'Internal server error',
    });
    await lastValueFrom(c.send('ledger.open', {})).catch(() => undefined);
    await expect(lastValueFrom(c.send('ledger.open', {}))).rejects.toMatchObject({
      status: 503,
      error: 'Service Unavailable',
    });
    state.quoteFailures = 1;
    await expect(lastValueFrom(c.send('shipping.quote', {}))).resolves.toEqual({ price: 42 });
    expect(logger.errors.join('\n')).not.toMatch(/isHeadersSent|TypeError/);
  });
});
