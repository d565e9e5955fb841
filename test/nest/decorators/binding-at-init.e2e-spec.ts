import 'reflect-metadata';
import { afterEach, describe, expect, it } from '@jest/globals';
import {
  BadRequestException,
  Body,
  Controller,
  Injectable,
  Module,
  Param,
  ParseIntPipe,
  Post,
  Query,
  UseGuards,
  type ArgumentMetadata,
  type CanActivate,
  type DynamicModule,
  type ExecutionContext,
  type INestApplication,
  type INestMicroservice,
  type PipeTransform,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import {
  ClientProxyFactory,
  Ctx,
  MessagePattern,
  Payload,
  TcpContext,
  Transport,
  type ClientProxy,
} from '@nestjs/microservices';
import { Test, type TestingModule } from '@nestjs/testing';
import { lastValueFrom } from 'rxjs';
import request from 'supertest';
import {
  BrokenCircuitError,
  CircuitBreaker,
  ResilienceModule,
  ResiliencePipelineRegistry,
  ResilienceValidationError,
  Retry,
} from '../../../src/index.js';
import { freePort } from '../../microservices/rpc-transports.js';

describe('an RPC handler with @Retry on a TCP microservice', () => {
  const seen: Record<string, unknown[][]> = {};
  const record = (pattern: string, args: unknown[]): number => (seen[pattern] ??= []).push(args);

  @Controller()
  class SumController {
    // Without parameter decorators Nest passes its default arguments (the data), as to `plainSum`.
    @MessagePattern('sum')
    @Retry({ maxRetryAttempts: 2, delay: 0 })
    sum(...args: [number[]]): number {
      if (record('sum', args) === 1) throw new Error('fails once');
      return args[0].reduce((a, b) => a + b, 0);
    }

    @MessagePattern('sum.plain')
    plainSum(...args: [number[]]): number {
      record('sum.plain', args);
      return args[0].reduce((a, b) => a + b, 0);
    }

    @MessagePattern('sum.payload')
    @Retry({ maxRetryAttempts: 2, delay: 0 })
    async sumPayload(@Payload() data: number[], @Ctx() ctx: TcpContext): Promise<number> {
      if (record('sum.payload', [data, ctx]) === 1) throw new Error('fails once');
      return data.reduce((a, b) => a + b, 0);
    }
  }

  @Module({ imports: [ResilienceModule.forRoot()], controllers: [SumController] })
  class SumModule {}

  let server: INestMicroservice | undefined;
  let client: ClientProxy | undefined;

  afterEach(async () => {
    client?.close();
    await server?.close();
    for (const key of Object.keys(seen)) delete seen[key];
  });

  /** Started as Nest's docs start a microservice: `listen()` alone. */
  async function start(): Promise<ClientProxy> {
    const port = await freePort();
    server = await NestFactory.createMicroservice(SumModule, {
      transport: Transport.TCP,
      options: { host: '127.0.0.1', port },
      logger: false,
    });
    await server.listen();
    client = ClientProxyFactory.create({ transport: Transport.TCP, options: { host: '127.0.0.1', port } });
    return client;
  }

  it('without @Payload(): receives on every attempt what Nest passes an undecorated handler', async () => {
    const c = await start();
    await expect(lastValueFrom(c.send('sum.plain', [1, 2, 3]))).resolves.toBe(6);
    await expect(lastValueFrom(c.send('sum', [1, 2, 3]))).resolves.toBe(6);
    expect(seen['sum']).toHaveLength(2); // failed once, then succeeded
    for (const args of seen['sum']) expect(args).toEqual(seen['sum.plain'][0]);
    expect(seen['sum'][0][0]).toEqual([1, 2, 3]);
  });

  it('with @Payload() and @Ctx(): receives the data and the context on every attempt', async () => {
    const c = await start();
    await expect(lastValueFrom(c.send('sum.payload', [1, 2, 3]))).resolves.toBe(6);
    expect(seen['sum.payload']).toHaveLength(2);
    for (const [data, ctx] of seen['sum.payload']) {
      expect(data).toEqual([1, 2, 3]);
      expect(ctx).toBeInstanceOf(TcpContext);
      expect((ctx as TcpContext).getPattern()).toBe('sum.payload');
    }
  });
});

describe('two applications of one process', () => {
  @Injectable()
  class Quotes {
    calls = 0;
    failing = false;

    @CircuitBreaker('quotes')
    @Retry({ maxRetryAttempts: 1, delay: 0 })
    async latest(): Promise<string> {
      this.calls++;
      if (this.failing) throw new Error('down');
      return 'EUR/USD 1.09';
    }
  }

  const quotesModule = (failureThreshold: number): Promise<TestingModule> =>
    Test.createTestingModule({
      imports: [
        ResilienceModule.forRoot({
          pipelines: { quotes: { circuitBreaker: { kind: 'consecutive', failureThreshold, breakDuration: 60_000 } } },
        }),
      ],
      providers: [Quotes],
    }).compile();

  it('are independent: each has its own instances, registry and circuits, and closing one leaves the other', async () => {
    const a = await quotesModule(2);
    const b = await quotesModule(2);
    await a.init();
    await b.init();
    expect(a.get(ResiliencePipelineRegistry)).not.toBe(b.get(ResiliencePipelineRegistry));

    const quotesA = a.get(Quotes);
    quotesA.failing = true;
    await expect(quotesA.latest()).rejects.toThrow('down'); // two failures: A's circuit opens
    await expect(quotesA.latest()).rejects.toBeInstanceOf(BrokenCircuitError);
    expect(quotesA.calls).toBe(2);

    const quotesB = b.get(Quotes);
    await expect(quotesB.latest()).resolves.toBe('EUR/USD 1.09'); // B's circuit of the same name is closed
    await a.close();
    await expect(quotesB.latest()).resolves.toBe('EUR/USD 1.09');
    expect(quotesB.calls).toBe(2);
    await b.close();
  });

  it('one that fails to start does not affect another, started before or after it', async () => {
    const before = await quotesModule(2);
    await before.init();
    const broken = await quotesModule(-1);
    await expect(broken.init()).rejects.toBeInstanceOf(ResilienceValidationError);
    const after = await quotesModule(2);
    await after.init();
    for (const moduleRef of [before, after]) {
      const quotes = moduleRef.get(Quotes);
      quotes.failing = true;
      await expect(quotes.latest()).rejects.toThrow('down');
      expect(quotes.calls).toBe(2); // retried: the pipeline is bound
    }
    await broken.close();
    await before.close();
    await after.close();
  });
});

describe('a decorated route handler with Nest parameters, a global pipe and a guard', () => {
  const log = { guard: 0, pipe: [] as string[], attempts: [] as unknown[][] };

  /** Trims strings and rejects an empty name, like a validation pipe. */
  class TrimPipe implements PipeTransform {
    transform(value: unknown, metadata: ArgumentMetadata): unknown {
      log.pipe.push(`${metadata.type}:${metadata.data ?? ''}`);
      if (metadata.type === 'body' && !(value as { name?: string })?.name?.trim()) {
        throw new BadRequestException('name is required');
      }
      if (typeof value === 'string') return value.trim();
      return value;
    }
  }

  @Injectable()
  class KeyGuard implements CanActivate {
    canActivate(context: ExecutionContext): boolean {
      log.guard++;
      return context.switchToHttp().getRequest<{ headers: Record<string, string> }>().headers['x-key'] === 'ok';
    }
  }

  @Controller('items')
  class ItemsController {
    failuresLeft = 0;

    @Post(':id')
    @UseGuards(KeyGuard)
    @Retry({ maxRetryAttempts: 2, delay: 0 })
    async update(
      @Param('id', ParseIntPipe) id: number,
      @Query('tag') tag: string,
      @Body() body: { name: string },
    ): Promise<{ id: number; tag: string; name: string }> {
      log.attempts.push([id, tag, body]);
      if (this.failuresLeft-- > 0) throw new Error('transient');
      return { id, tag, name: body.name };
    }
  }

  function itemsModule(): DynamicModule {
    @Module({})
    class ItemsModule {}
    return { module: ItemsModule, imports: [ResilienceModule.forRoot()], controllers: [ItemsController] };
  }

  let app: INestApplication | undefined;
  afterEach(async () => {
    await app?.close();
    log.guard = 0;
    log.pipe = [];
    log.attempts = [];
  });

  async function start(): Promise<INestApplication> {
    const moduleRef = await Test.createTestingModule({ imports: [itemsModule()] }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    app.useGlobalPipes(new TrimPipe());
    await app.init();
    return app;
  }

  it('gets its arguments as Nest resolves them, the guard and pipes running once before the retries', async () => {
    const a = await start();
    a.get(ItemsController).failuresLeft = 2;
    const res = await request(a.getHttpServer())
      .post('/items/7?tag=%20new%20')
      .set('x-key', 'ok')
      .send({ name: 'lamp' })
      .expect(201);
    expect(res.body).toEqual({ id: 7, tag: 'new', name: 'lamp' });
    expect(log.attempts).toEqual([
      [7, 'new', { name: 'lamp' }],
      [7, 'new', { name: 'lamp' }],
      [7, 'new', { name: 'lamp' }],
    ]);
    expect(log.guard).toBe(1);
    expect(log.pipe.sort()).toEqual(['body:', 'param:id', 'query:tag']);
  });

  it('answers 403 from the guard and 400 from the pipes without running the method', async () => {
    const a = await start();
    await request(a.getHttpServer()).post('/items/7').send({ name: 'lamp' }).expect(403);
    await request(a.getHttpServer()).post('/items/x').set('x-key', 'ok').send({ name: 'lamp' }).expect(400);
    await request(a.getHttpServer()).post('/items/7').set('x-key', 'ok').send({ name: ' ' }).expect(400);
    expect(log.attempts).toEqual([]);
  });

  it('returns a promise of the value when a test calls the controller method directly', async () => {
    const a = await start();
    const controller = a.get(ItemsController);
    controller.failuresLeft = 1;
    const result = controller.update(1, 'direct', { name: 'desk' });
    expect(result).toBeInstanceOf(Promise);
    await expect(result).resolves.toEqual({ id: 1, tag: 'direct', name: 'desk' });
    expect(log.attempts).toHaveLength(2);
  });
});
