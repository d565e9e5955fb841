import { afterAll, afterEach, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { Injectable, Module, type INestApplicationContext, type INestMicroservice } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ClientRedis, ClientsModule, Transport, type ClientOptions } from '@nestjs/microservices';
import { lastValueFrom } from 'rxjs';
import {
  isBrokenCircuitError,
  isTimeoutRejectedError,
  ResiliencePipelineRegistry,
  ResilienceValidationError,
} from '../../src/core.entry.js';
import {
  InjectResilientClient,
  ResilientClientProxy,
  ResilientClients,
  ResilientClientsModule,
  RPC_PREDICATES,
  STANDARD_RPC_PIPELINE_DEFAULTS,
  type ResilientClientsModuleOptions,
} from '../../src/nest/microservices/index.js';
import { ResilienceModule, AttemptTimeout, type ResilienceModuleOptions } from '../../src/nest/index.js';
import { FakeTimeProvider } from '../../src/testing/index.js';
import { InventoryModule, InventoryState } from './inventory.fixture.js';
import { freePort } from './rpc-transports.js';

@Injectable()
class OrderService {
  constructor(@InjectResilientClient('inventory') readonly inventory: ResilientClientProxy) {}

  /** A decorated method: the call inherits its signal, so its timeout cancels the call. */
  @AttemptTimeout(300)
  hold(): Promise<unknown> {
    return lastValueFrom(this.inventory.send('inventory.hang', {}));
  }
}

describe('ResilientClientsModule', () => {
  let port: number;
  let tcp: ClientOptions;
  let server: INestMicroservice;
  let state: InventoryState;
  let app: INestApplicationContext | undefined;

  beforeAll(async () => {
    port = await freePort();
    tcp = { transport: Transport.TCP, options: { host: '127.0.0.1', port } };
    state = new InventoryState();
    server = await NestFactory.createMicroservice(InventoryModule.register(state, new FakeTimeProvider()), {
      ...tcp,
      logger: false,
    });
    await server.listen();
  });

  afterAll(async () => {
    await server.close();
  });

  afterEach(async () => {
    await app?.close();
    app = undefined;
    for (const key of Object.keys(state.calls)) delete state.calls[key];
  });

  async function start(
    options: ResilientClientsModuleOptions,
    resilience: ResilienceModuleOptions = {},
  ): Promise<INestApplicationContext> {
    @Module({
      imports: [ResilienceModule.forRoot(resilience), ResilientClientsModule.register(options)],
      providers: [OrderService],
    })
    class ClientAppModule {}
    app = await NestFactory.createApplicationContext(ClientAppModule, { logger: false, abortOnError: false });
    return app;
  }

  it('fails the start with one ResilienceValidationError listing every problem', async () => {
    const error = await start({
      clients: {
        inventory: {
          client: { ...tcp },
          pipeline: 'no-such-pipeline',
          perPattern: 'yes' as unknown as boolean,
          retries: 3,
          patterns: {
            'inventory.reserve': { pipeline: 'missing', idempotent: 1 as unknown as boolean },
            'inventory.audit': { countRemoteErrors: 'sometimes' as unknown as boolean },
          },
        } as never,
        billing: { client: { ...tcp }, pipeline: { attemptTimeout: 20_000, retry: { maxRetryAttempts: -1 } } },
      },
    }).catch((e: unknown) => e);
    app = undefined;
    expect(error).toBeInstanceOf(ResilienceValidationError);
    const paths = (error as ResilienceValidationError).issues.map((i) => i.path).sort();
    expect(paths).toEqual(
      [
        'clients.billing.pipeline.attemptTimeout',
        'clients.billing.pipeline.retry.maxRetryAttempts',
        'clients.inventory.pipeline',
        'clients.inventory.perPattern',
        'clients.inventory.retries',
        'clients.inventory.patterns.inventory.reserve.pipeline',
        'clients.inventory.patterns.inventory.reserve.idempotent',
        'clients.inventory.patterns.inventory.audit.countRemoteErrors',
      ].sort(),
    );
  });

  it("accepts propagateDeadline true, false or 'metadata', per client and per pattern", async () => {
    const error = await start({
      clients: {
        inventory: {
          client: { ...tcp },
          propagateDeadline: 'headers' as never,
          patterns: {
            'inventory.reserve': { propagateDeadline: 'metadata' },
            'inventory.audit': { propagateDeadline: 1 as never },
          },
        },
      },
    }).catch((e: unknown) => e);
    app = undefined;
    expect((error as ResilienceValidationError).issues).toEqual([
      { path: 'clients.inventory.propagateDeadline', value: 'headers', rule: 'must be one of true, false, "metadata"' },
      {
        path: 'clients.inventory.patterns.inventory.audit.propagateDeadline',
        value: 1,
        rule: 'must be one of true, false, "metadata"',
      },
    ]);
  });

  it('fails the start on an unknown transport, naming it with a "did you mean", along with every other problem', async () => {
    const error = await start({
      clients: {
        inventory: { client: { transport: 'KAFKAA', options: {} } as unknown as ClientOptions },
        billing: { client: { transport: 42 as Transport.TCP, options: {} }, perPattern: 'no' as never },
      },
    }).catch((e: unknown) => e);
    app = undefined;
    expect(error).toBeInstanceOf(ResilienceValidationError);
    expect((error as ResilienceValidationError).issues).toEqual([
      {
        path: 'clients.inventory.client.transport',
        value: 'KAFKAA',
        rule: 'is not a transport of @nestjs/microservices (did you mean "KAFKA"? known: TCP, REDIS, NATS, MQTT, GRPC, RMQ, KAFKA)',
      },
      {
        path: 'clients.billing.client.transport',
        value: 42,
        rule: 'is not a transport of @nestjs/microservices (known: TCP, REDIS, NATS, MQTT, GRPC, RMQ, KAFKA)',
      },
      expect.objectContaining({ path: 'clients.billing.perPattern' }),
    ]);
    expect((error as Error).message).toContain('clients.inventory.client.transport: "KAFKAA" is not a transport');
  });

  it('takes a transport by its name, as configuration gives it ("REDIS" is Transport.REDIS, not TCP)', async () => {
    const context = await start({
      imports: [ClientsModule.register([{ name: 'inventory', ...tcp }])],
      // Never connected: the client connects on its first message.
      clients: {
        inventory: {},
        cache: { client: { transport: 'REDIS', options: { port: 1 } } as unknown as ClientOptions },
      },
    });
    expect(context.get(ResilientClients).get('cache').client).toBeInstanceOf(ClientRedis);
  });

  it('provides each client by name and by class, on the standard pipeline by default', async () => {
    const context = await start({
      imports: [ClientsModule.register([{ name: 'inventory', ...tcp }])],
      clients: { inventory: {} },
    });
    const order = context.get(OrderService);
    expect(order.inventory).toBe(context.get(ResilientClients).get('inventory'));
    expect(context.get(ResiliencePipelineRegistry).getPipelineConfig('rpc-standard')).toMatchObject({
      timeout: STANDARD_RPC_PIPELINE_DEFAULTS.attemptTimeout,
      totalTimeout: STANDARD_RPC_PIPELINE_DEFAULTS.totalTimeout,
    });
    await expect(lastValueFrom(order.inventory.send('inventory.echo', { id: 1 }))).resolves.toEqual({
      echo: { id: 1 },
    });
    expect(() => context.get(ResilientClients).get('billing')).toThrow(/Unknown resilient client "billing"/);
  });

  it('makes the ClientProxy from client options, registers standard options as rpc:<name>, closes it at shutdown', async () => {
    const context = await start({
      clients: { inventory: { client: { ...tcp }, pipeline: { attemptTimeout: 300, retry: { maxRetryAttempts: 1 } } } },
    });
    const inventory = context.get(OrderService).inventory;
    expect(context.get(ResiliencePipelineRegistry).getPipelineConfig('rpc:inventory')).toMatchObject({ timeout: 300 });
    await expect(lastValueFrom(inventory.send('inventory.echo', 2))).resolves.toEqual({ echo: 2 });
    const close = jest.spyOn(inventory.client, 'close');
    await context.close();
    app = undefined;
    expect(close).toHaveBeenCalledTimes(1);
  });

  it('chooses the pipeline per pattern, and one circuit per client or per pattern', async () => {
    const context = await start(
      {
        clients: {
          inventory: { client: { ...tcp }, pipeline: 'fast', patterns: { 'inventory.flaky': { pipeline: 'patient' } } },
          split: { client: { ...tcp }, pipeline: 'fast', perPattern: true },
        },
      },
      { pipelines: { fast: { timeout: 100 }, patient: { timeout: 5_000 } } },
    );
    const registry = context.get(ResiliencePipelineRegistry);
    const clients = context.get(ResilientClients);
    const inventory = clients.get('inventory');
    expect(inventory.pipelineFor('inventory.echo')).toBe(registry.getPipeline('fast', 'inventory'));
    expect(inventory.pipelineFor('inventory.stream')).toBe(inventory.pipelineFor('inventory.echo'));
    expect(inventory.pipelineFor('inventory.flaky')).toBe(registry.getPipeline('patient', 'inventory'));
    const split = clients.get('split');
    expect(split.pipelineFor('inventory.echo')).not.toBe(split.pipelineFor('inventory.stream'));
    expect(split.pipelineFor({ cmd: 'sum', v: 1 })).toBe(registry.getPipeline('fast', 'split:{"cmd":"sum","v":1}'));
  });

  it('retries and counts remote errors only for the patterns configured to', async () => {
    const context = await start(
      {
        clients: {
          inventory: {
            client: { ...tcp },
            pipeline: 'strict',
            patterns: { 'inventory.reject': { retryRemoteErrors: true } },
          },
          counting: {
            client: { ...tcp },
            pipeline: 'strict',
            countRemoteErrors: (error) => (error as { code?: string }).code === 'OUT_OF_STOCK',
          },
        },
      },
      {
        pipelines: {
          strict: {
            retry: { maxRetryAttempts: 2, delay: 0, shouldHandle: 'rpc-retryable' },
            circuitBreaker: {
              kind: 'consecutive',
              failureThreshold: 2,
              breakDuration: 60_000,
              shouldHandle: 'rpc-failure',
            },
          },
        },
        predicates: { ...RPC_PREDICATES },
      },
    );
    const clients = context.get(ResilientClients);
    await expect(lastValueFrom(clients.get('inventory').send('inventory.reject', {}))).rejects.toMatchObject({
      code: 'OUT_OF_STOCK',
    });
    expect(state.calls['inventory.reject']).toBe(3); // retried twice

    const counting = clients.get('counting');
    for (let i = 0; i < 2; i++) {
      await expect(lastValueFrom(counting.send('inventory.reject', {}))).rejects.toMatchObject({
        code: 'OUT_OF_STOCK',
      });
    }
    expect(state.calls['inventory.reject']).toBe(5); // not retried
    const fast = await lastValueFrom(counting.send('inventory.echo', 1)).catch((e: unknown) => e);
    expect(isBrokenCircuitError(fast)).toBe(true); // the remote errors opened the circuit
  });

  it('follows a reload of the pipeline it names: calls started afterwards run the new options', async () => {
    const context = await start(
      { clients: { inventory: { client: { ...tcp }, pipeline: 'quotes', retryRemoteErrors: true } } },
      { pipelines: { quotes: { retry: { maxRetryAttempts: 1, delay: 0 } } } },
    );
    const inventory = context.get(ResilientClients).get('inventory');
    await expect(lastValueFrom(inventory.send('inventory.reject', {}))).rejects.toMatchObject({ code: 'OUT_OF_STOCK' });
    expect(state.calls['inventory.reject']).toBe(2);

    await context.get(ResiliencePipelineRegistry).reload('quotes', { retry: { maxRetryAttempts: 3, delay: 0 } });
    await expect(lastValueFrom(inventory.send('inventory.reject', {}))).rejects.toMatchObject({ code: 'OUT_OF_STOCK' });
    expect(state.calls['inventory.reject']).toBe(2 + 4);

    // A reload that adds a timeout reaches the client too: the timeout now ends a call that hangs.
    await context.get(ResiliencePipelineRegistry).reload('quotes', { timeout: '50ms' });
    const hung = await lastValueFrom(inventory.send('inventory.hang', {})).catch((e: unknown) => e);
    expect(isTimeoutRejectedError(hung)).toBe(true);
    for (const resolve of state.hanging.splice(0)) resolve('late');
  });

  it('aborts a call through its signal: the reply is dropped and the call counted as cancelled', async () => {
    const context = await start({ clients: { inventory: { client: { ...tcp } } } });
    const inventory = context.get(ResilientClients).get('inventory');
    await inventory.connect();
    state.hangFirstOnly = false;
    const controller = new AbortController();
    const call = lastValueFrom(inventory.send('inventory.hang', {}, { signal: controller.signal }));
    while (state.calls['inventory.hang'] !== 1) await new Promise((r) => setTimeout(r, 2));
    controller.abort(new DOMException('The order was cancelled.', 'AbortError'));
    await expect(call).rejects.toMatchObject({ name: 'AbortError', message: 'The order was cancelled.' });
    expect(inventory.metrics).toMatchObject({ attempts: 1, cancelled: 1, failed: 0 });
    state.releaseAll();
    state.hangFirstOnly = true;
  });

  it("cancels a call made in a decorated method when that method's timeout fires", async () => {
    const clock = new FakeTimeProvider();
    const context = await start({ clients: { inventory: { client: { ...tcp } } } }, { timeProvider: clock });
    const order = context.get(OrderService);
    await order.inventory.connect();
    state.hangFirstOnly = false;
    const held = order.hold().catch((e: unknown) => e);
    while (state.calls['inventory.hang'] !== 1) await new Promise((r) => setTimeout(r, 2));
    await clock.advanceAsync(300);
    expect(isTimeoutRejectedError(await held)).toBe(true);
    expect(order.inventory.metrics).toMatchObject({ attempts: 1, cancelled: 1, failed: 0 });
    expect((order.inventory.client as unknown as { routingMap: Map<string, unknown> }).routingMap.size).toBe(0);
    expect(context.get(ResiliencePipelineRegistry).predicates.get('rpc-transport')).toBeDefined();
    state.releaseAll();
    state.hangFirstOnly = true;
  });
});
