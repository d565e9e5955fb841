import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  Controller,
  Inject,
  Injectable,
  Module,
  UseInterceptors,
  type DynamicModule,
  type INestApplicationContext,
  type INestMicroservice,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import {
  ClientProxyFactory,
  ClientsModule,
  Ctx,
  MessagePattern,
  MqttRecordBuilder,
  NatsRecordBuilder,
  Payload,
  RmqRecordBuilder,
  Transport,
  type ClientOptions,
  type ClientProxy,
  type MicroserviceOptions,
} from '@nestjs/microservices';
import { headers as natsHeaders } from '@nats-io/transport-node';
import { lastValueFrom } from 'rxjs';
import { getCriticality, ResiliencePipelineRegistry } from '../../src/core.entry.js';
import {
  currentResilienceContext,
  RequestDeadlineInterceptor,
  ResilienceModule,
  WithCriticality,
} from '../../src/nest/index.js';
import {
  getResilientClientToken,
  ResilientClientsModule,
  type ResilientClientProxy,
} from '../../src/nest/microservices/index.js';
import { FakeTimeProvider } from '../../src/testing/index.js';
import { freePort, startMosquitto, startNats, startRabbitMq, startRedis, type Broker } from './rpc-transports.js';

/**
 * The budget and criticality in a transport's own metadata — NATS headers, RabbitMQ message headers,
 * MQTT 5 user properties — over real brokers: what `RequestDeadlineInterceptor` reads of an incoming
 * message, and what the resilient client sends. Both sides run on fake clocks, so a budget arrives as
 * exactly the number sent.
 */

const DEADLINE = 'x-request-deadline-ms';
const CRITICALITY = 'x-criticality';
/** The client pipeline's total timeout: the budget every attempt of the resilient clients sends. */
const TOTAL = 1_500;
const host = '127.0.0.1';

type Entries = Record<string, string>;

interface TransportCase {
  readonly name: string;
  start(): Promise<Broker | undefined>;
  server(port: number): MicroserviceOptions;
  client(port: number): ClientOptions;
  /** A message carrying `entries` in its metadata, built as a Nest user builds it; absent: no metadata. */
  readonly record?: (data: unknown, entries: Entries) => unknown;
  /** The metadata entries a message arrived with (from the handler's transport context). */
  metadataOf(ctx: unknown): Entries;
}

function pick(get: (key: string) => unknown): Entries {
  const found: Entries = {};
  for (const key of [DEADLINE, CRITICALITY, 'x-tenant', 'grpc-timeout']) {
    const value = get(key);
    if (typeof value === 'string' && value !== '') found[key] = value;
  }
  return found;
}

const none = (): Entries => ({});
const rmqQueue = 'nest-resilience-deadline-metadata';

const nats: TransportCase = {
  name: 'NATS (headers)',
  start: startNats,
  server: (port) => ({ transport: Transport.NATS, options: { servers: [`nats://${host}:${port}`] } }),
  client: (port) => ({ transport: Transport.NATS, options: { servers: [`nats://${host}:${port}`] } }),
  record: (data, entries) => {
    const h = natsHeaders();
    for (const [key, value] of Object.entries(entries)) h.set(key, value);
    return new NatsRecordBuilder(data).setHeaders(h).build();
  },
  metadataOf: (ctx) => {
    const h = (ctx as { getHeaders(): { get(key: string): string } | undefined }).getHeaders();
    return h ? pick((key) => h.get(key)) : {};
  },
};

const rmq: TransportCase = {
  name: 'RabbitMQ (message headers)',
  start: startRabbitMq,
  server: (port) => ({ transport: Transport.RMQ, options: { urls: [`amqp://${host}:${port}`], queue: rmqQueue } }),
  client: (port) => ({ transport: Transport.RMQ, options: { urls: [`amqp://${host}:${port}`], queue: rmqQueue } }),
  record: (data, entries) => new RmqRecordBuilder(data).setOptions({ headers: entries }).build(),
  metadataOf: (ctx) => {
    const message = (ctx as { getMessage(): { properties: { headers?: Record<string, unknown> } } }).getMessage();
    return pick((key) => message.properties.headers?.[key]);
  },
};

const mqtt5: TransportCase = {
  name: 'MQTT 5 (user properties)',
  start: startMosquitto,
  server: (port) => ({ transport: Transport.MQTT, options: { url: `mqtt://${host}:${port}`, protocolVersion: 5 } }),
  client: (port) => ({ transport: Transport.MQTT, options: { url: `mqtt://${host}:${port}`, protocolVersion: 5 } }),
  record: (data, entries) => new MqttRecordBuilder(data).setProperties({ userProperties: entries }).build(),
  metadataOf: (ctx) => {
    const packet = (ctx as { getPacket(): { properties?: { userProperties?: Record<string, unknown> } } }).getPacket();
    return pick((key) => packet.properties?.userProperties?.[key]);
  },
};

const tcp: TransportCase = {
  name: 'TCP',
  start: async () => undefined,
  server: (port) => ({ transport: Transport.TCP, options: { host, port } }),
  client: (port) => ({ transport: Transport.TCP, options: { host, port } }),
  metadataOf: none,
};

const redis: TransportCase = {
  name: 'Redis',
  start: startRedis,
  server: (port) => ({ transport: Transport.REDIS, options: { host, port } }),
  client: (port) => ({ transport: Transport.REDIS, options: { host, port } }),
  metadataOf: none,
};

const mqtt311: TransportCase = {
  name: 'MQTT 3.1.1',
  start: startMosquitto,
  server: (port) => ({ transport: Transport.MQTT, options: { url: `mqtt://${host}:${port}` } }),
  client: (port) => ({ transport: Transport.MQTT, options: { url: `mqtt://${host}:${port}` } }),
  // Nest's MQTT client on 3.1.1 drops user properties: nothing to read.
  metadataOf: (ctx) => {
    const packet = (ctx as { getPacket(): { properties?: { userProperties?: Record<string, unknown> } } }).getPacket();
    return pick((key) => packet.properties?.userProperties?.[key]);
  },
};

/** What a handler saw of one message. */
interface Seen {
  readonly pattern: string;
  /** Milliseconds left before the handler's deadline when it ran; Infinity without one. */
  readonly budget: number;
  readonly criticality: string;
  readonly data: unknown;
  readonly metadata: Entries;
}

const SEEN = Symbol('seen');

/** Two handlers: `watched` behind `RequestDeadlineInterceptor`, `plain` without it (it sees what arrives). */
function serverModule(transport: TransportCase, clock: FakeTimeProvider, seen: Seen[]): DynamicModule {
  const record = (pattern: string, data: unknown, ctx: unknown, registry: ResiliencePipelineRegistry) => {
    const context = currentResilienceContext();
    seen.push({
      pattern,
      budget: context ? context.deadline - registry.timeProvider.now() : Infinity,
      criticality: context ? getCriticality(context) : 'default',
      data,
      metadata: transport.metadataOf(ctx),
    });
    return 'ok';
  };

  @Controller()
  @UseInterceptors(RequestDeadlineInterceptor)
  class WatchedController {
    constructor(@Inject(ResiliencePipelineRegistry) private readonly registry: ResiliencePipelineRegistry) {}

    @MessagePattern('meta.watched')
    watched(@Payload() data: unknown, @Ctx() ctx: unknown): string {
      return record('watched', data, ctx, this.registry);
    }
  }

  @Controller()
  class PlainController {
    constructor(@Inject(ResiliencePipelineRegistry) private readonly registry: ResiliencePipelineRegistry) {}

    @MessagePattern('meta.plain')
    plain(@Payload() data: unknown, @Ctx() ctx: unknown): string {
      return record('plain', data, ctx, this.registry);
    }
  }

  @Module({
    imports: [ResilienceModule.forRoot({ timeProvider: clock, asyncContextPropagation: true })],
    controllers: [WatchedController, PlainController],
    providers: [{ provide: SEEN, useValue: seen }],
  })
  class ServerModule {}
  return { module: ServerModule };
}

@Injectable()
class Caller {
  constructor(@Inject(getResilientClientToken('metadata')) private readonly client: ResilientClientProxy) {}

  /** Sends before its first `await`: the call carries this method's criticality. */
  @WithCriticality('sheddable')
  sheddable(pattern: string, data: unknown): Promise<unknown> {
    return lastValueFrom(this.client.send(pattern, data));
  }
}

/** The resilient clients, one per `propagateDeadline` mode, over one `ClientProxy`; a fake clock. */
function clientModule(options: ClientOptions, clock: FakeTimeProvider): DynamicModule {
  const pipeline = 'deadline-metadata';
  @Module({
    imports: [
      ResilienceModule.forRoot({ timeProvider: clock, pipelines: { [pipeline]: { totalTimeout: TOTAL } } }),
      ResilientClientsModule.register({
        imports: [ClientsModule.register([{ name: 'BROKER', ...options }])],
        clients: {
          metadata: { client: 'BROKER', pipeline },
          both: { client: 'BROKER', pipeline, propagateDeadline: true },
          none: { client: 'BROKER', pipeline, propagateDeadline: false },
        },
      }),
    ],
    providers: [Caller],
  })
  class ClientModule {}
  return { module: ClientModule };
}

/** A broker (if any), the server, the resilient clients' app and a plain `ClientProxy`, for a `describe`. */
function setUp(transport: TransportCase) {
  const env = {
    seen: [] as Seen[],
    broker: undefined as Broker | undefined,
    server: undefined as INestMicroservice | undefined,
    app: undefined as INestApplicationContext | undefined,
    raw: undefined as ClientProxy | undefined,
    /** Sends with a plain `ClientProxy` and returns what the handler of `pattern` saw (or the error). */
    async sendRaw(pattern: string, data: unknown): Promise<unknown> {
      const before = env.seen.length;
      const reply = await lastValueFrom(env.raw!.send(`meta.${pattern}`, data)).catch((error: unknown) => ({ error }));
      return env.seen.length > before ? env.seen.at(-1) : reply;
    },
    /** Sends with a resilient client and returns what the handler of `pattern` saw. */
    async sendResilient(client: string, pattern: string, data: unknown): Promise<Seen> {
      await lastValueFrom(
        env.app!.get<ResilientClientProxy>(getResilientClientToken(client)).send(`meta.${pattern}`, data),
      );
      return env.seen.at(-1)!;
    },
  };
  beforeAll(async () => {
    env.broker = await transport.start();
    const port = env.broker?.port ?? (await freePort());
    env.server = await NestFactory.createMicroservice(serverModule(transport, new FakeTimeProvider(), env.seen), {
      ...transport.server(port),
      logger: false,
    });
    await env.server.listen();
    env.app = await NestFactory.createApplicationContext(clientModule(transport.client(port), new FakeTimeProvider()), {
      logger: false,
    });
    await env.app.init();
    env.raw = ClientProxyFactory.create(transport.client(port));
    await env.raw.connect();
  }, 120_000);
  afterAll(async () => {
    await env.raw?.close();
    await env.app?.close();
    await env.server?.close();
    await env.broker?.stop();
  }, 60_000);
  return env;
}

describe.each([nats, rmq, mqtt5])('the budget in the metadata of $name', (transport) => {
  const env = setUp(transport);
  const record = transport.record!;

  describe('RequestDeadlineInterceptor', () => {
    it("makes a budget in the metadata the handler's deadline; the data arrives as sent", async () => {
      expect(await env.sendRaw('watched', record({ sku: 'M-1' }, { [DEADLINE]: '1200' }))).toMatchObject({
        budget: 1_200,
        data: { sku: 'M-1' },
      });
    });

    it("reads gRPC's syntax, and the grpc-timeout entry", async () => {
      expect(await env.sendRaw('watched', record({ sku: 'M-2' }, { [DEADLINE]: '2S' }))).toMatchObject({
        budget: 2_000,
      });
      expect(await env.sendRaw('watched', record({ sku: 'M-3' }, { 'grpc-timeout': '800m' }))).toMatchObject({
        budget: 800,
      });
    });

    it('takes the smaller budget when the metadata and the data field both carry one (and takes the field out)', async () => {
      expect(await env.sendRaw('watched', record({ sku: 'M-4', [DEADLINE]: 700 }, { [DEADLINE]: '2S' }))).toMatchObject(
        {
          budget: 700,
          data: { sku: 'M-4' },
        },
      );
      expect(
        await env.sendRaw('watched', record({ sku: 'M-5', [DEADLINE]: 900 }, { [DEADLINE]: '500' })),
      ).toMatchObject({
        budget: 500,
        data: { sku: 'M-5' },
      });
    });

    it('rejects a spent budget in the metadata with the DEADLINE_EXCEEDED payload before the handler runs', async () => {
      const before = env.seen.length;
      for (const spent of ['0', '-20', '0m']) {
        expect(await env.sendRaw('watched', record({ sku: 'M-6' }, { [DEADLINE]: spent }))).toEqual({
          error: {
            status: 504,
            error: 'Gateway Timeout',
            message: "The caller's deadline has passed.",
            retryAfter: null,
            code: 'DEADLINE_EXCEEDED',
          },
        });
      }
      expect(env.seen).toHaveLength(before);
    });

    it("makes the criticality in the metadata the handler's; it wins over the data field", async () => {
      expect(await env.sendRaw('watched', record({ sku: 'M-7' }, { [CRITICALITY]: 'sheddable' }))).toMatchObject({
        criticality: 'sheddable',
        budget: Infinity,
      });
      const both = record({ sku: 'M-8', [CRITICALITY]: 'critical' }, { [CRITICALITY]: 'sheddable' });
      expect(await env.sendRaw('watched', both)).toMatchObject({ criticality: 'sheddable', data: { sku: 'M-8' } });
    });
  });

  describe('the resilient client', () => {
    it('by default sends the budget and criticality in the metadata only: the data arrives as sent', async () => {
      const watched = await env.app!.get(Caller).sheddable('meta.watched', { sku: 'C-1' });
      expect(watched).toBe('ok');
      expect(env.seen.at(-1)).toEqual({
        pattern: 'watched',
        budget: TOTAL,
        criticality: 'sheddable',
        data: { sku: 'C-1' },
        metadata: { [DEADLINE]: String(TOTAL), [CRITICALITY]: 'sheddable' },
      });
      // A handler without the interceptor gets the data as it was sent.
      await env.app!.get(Caller).sheddable('meta.plain', { sku: 'C-2' });
      expect(env.seen.at(-1)).toMatchObject({ pattern: 'plain', data: { sku: 'C-2' } });
    });

    it('with propagateDeadline: true sends the data fields too, for receivers that read only them', async () => {
      expect(await env.sendResilient('both', 'plain', { sku: 'C-3' })).toMatchObject({
        data: { sku: 'C-3', [DEADLINE]: TOTAL },
        metadata: { [DEADLINE]: String(TOTAL) },
      });
      expect(await env.sendResilient('both', 'watched', { sku: 'C-4' })).toMatchObject({
        budget: TOTAL,
        data: { sku: 'C-4' },
      });
    });

    it('with propagateDeadline: false sends neither', async () => {
      expect(await env.sendResilient('none', 'watched', { sku: 'C-5' })).toMatchObject({
        budget: Infinity,
        data: { sku: 'C-5' },
        metadata: {},
      });
    });

    it("adds the entries to a record the caller built, keeping the caller's own", async () => {
      const built = record({ sku: 'C-6' }, { 'x-tenant': 'blue' });
      expect(await env.sendResilient('metadata', 'watched', built)).toMatchObject({
        budget: TOTAL,
        data: { sku: 'C-6' },
        metadata: { 'x-tenant': 'blue', [DEADLINE]: String(TOTAL) },
      });
    });
  });
});

describe.each([tcp, redis, mqtt311])('$name: no metadata, the data field', (transport) => {
  const env = setUp(transport);

  it('the resilient client sends nothing by default: the handler runs without a deadline', async () => {
    expect(await env.sendResilient('metadata', 'watched', { sku: 'D-1' })).toMatchObject({
      budget: Infinity,
      data: { sku: 'D-1' },
      metadata: {},
    });
  });

  it("with propagateDeadline: true it sends the data field, which becomes the handler's deadline", async () => {
    expect(await env.sendResilient('both', 'watched', { sku: 'D-2' })).toMatchObject({
      budget: TOTAL,
      data: { sku: 'D-2' },
    });
    expect(await env.sendResilient('both', 'plain', { sku: 'D-3' })).toMatchObject({
      data: { sku: 'D-3', [DEADLINE]: TOTAL },
    });
  });

  it('sends data that is not a plain object as it is, without a budget', async () => {
    expect(await env.sendResilient('both', 'watched', 'D-5')).toMatchObject({ budget: Infinity, data: 'D-5' });
    expect(await env.sendResilient('both', 'plain', ['D-6'])).toMatchObject({ data: ['D-6'] });
  });

  it('a spent budget in the data field is rejected with the DEADLINE_EXCEEDED payload before the handler runs', async () => {
    const before = env.seen.length;
    expect(await env.sendRaw('watched', { sku: 'D-4', [DEADLINE]: 0 })).toEqual({
      error: expect.objectContaining({ status: 504, code: 'DEADLINE_EXCEEDED' }),
    });
    expect(env.seen).toHaveLength(before);
  });
});
