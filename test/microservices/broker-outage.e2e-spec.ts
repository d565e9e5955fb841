import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Module, type DynamicModule, type INestApplicationContext, type INestMicroservice } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ClientsModule, Transport, type ClientOptions, type MicroserviceOptions } from '@nestjs/microservices';
import { lastValueFrom, timeout } from 'rxjs';
import { isBrokenCircuitError, type CircuitState } from '../../src/core.entry.js';
import { ResilienceModule } from '../../src/nest/index.js';
import {
  getResilientClientToken,
  isRpcTransportError,
  ResilientClientsModule,
  RPC_PREDICATES,
  type ResilientClientProxy,
} from '../../src/nest/microservices/index.js';
import { FakeTimeProvider } from '../../src/testing/index.js';
import { driveWithClock } from '../utils/drive.js';
import { InventoryModule, InventoryState } from './inventory.fixture.js';
import { startMosquitto, startNats, startRabbitMq, startRedis, type Broker } from './rpc-transports.js';

/**
 * A broker killed (SIGKILL, no goodbye) under a connected client that keeps Nest's default reconnect
 * options: the client's calls fail as transport failures — retried, counted by the breaker — so its circuit
 * opens, calls fail fast while the broker is down, and once the broker is back on the same port the circuit
 * closes through its half-open probe. The breaker's clock is fake: nothing waits for the break duration.
 */
interface OutageCase {
  readonly name: string;
  start(): Promise<Broker>;
  /** The server side reconnects on its own quickly (not what is under test). */
  server(port: number): MicroserviceOptions;
  /** The client under test: Nest's default reconnect behaviour unless the case says otherwise. */
  client(port: number): ClientOptions;
  /**
   * Real time the case may take: its hooks and test each, and the wait for a round trip after the restart
   * (the broker's boot plus the client's reconnect delay). Default: Jest's timeout, and 15 s.
   */
  readonly budgetMs?: number;
}

const host = '127.0.0.1';
/** Client and server agree on the queue (Nest's default is none). */
const RMQ_QUEUE = 'nest-resilience-outage';

const cases: OutageCase[] = [
  {
    // Nest's default: no reconnect (no `retryAttempts`); the next call connects anew and fails.
    name: 'Redis (default options)',
    start: startRedis,
    server: (port) => ({ transport: Transport.REDIS, options: { host, port, retryAttempts: 1_000, retryDelay: 50 } }),
    client: (port) => ({ transport: Transport.REDIS, options: { host, port } }),
  },
  {
    // With `retryAttempts` the client reconnects, rejecting calls with a string meanwhile.
    name: 'Redis (reconnecting client)',
    start: startRedis,
    server: (port) => ({ transport: Transport.REDIS, options: { host, port, retryAttempts: 1_000, retryDelay: 50 } }),
    client: (port) => ({ transport: Transport.REDIS, options: { host, port, retryAttempts: 1_000, retryDelay: 100 } }),
  },
  {
    name: 'NATS (default options)',
    start: startNats,
    server: (port) => ({
      transport: Transport.NATS,
      options: { servers: [`nats://${host}:${port}`], reconnectTimeWait: 50, maxReconnectAttempts: -1 },
    }),
    client: (port) => ({ transport: Transport.NATS, options: { servers: [`nats://${host}:${port}`] } }),
  },
  {
    name: 'MQTT (default options)',
    start: startMosquitto,
    server: (port) => ({ transport: Transport.MQTT, options: { url: `mqtt://${host}:${port}`, reconnectPeriod: 50 } }),
    client: (port) => ({ transport: Transport.MQTT, options: { url: `mqtt://${host}:${port}` } }),
  },
  {
    // The client's connection manager reconnects every 5 s (its default) and rejects calls with
    // 'Error: Connection lost. Trying to reconnect...' meanwhile. A node boots in 10-30 s, twice here.
    name: 'RMQ (default options)',
    start: startRabbitMq,
    server: (port) => ({
      transport: Transport.RMQ,
      options: { urls: [`amqp://${host}:${port}`], queue: RMQ_QUEUE, socketOptions: { reconnectTimeInSeconds: 0.1 } },
    }),
    client: (port) => ({ transport: Transport.RMQ, options: { urls: [`amqp://${host}:${port}`], queue: RMQ_QUEUE } }),
    budgetMs: 180_000,
  },
];

const FAILURES = 3;
const BREAK = 30_000;

function clientModule(options: ClientOptions, clock: FakeTimeProvider, probe: { state: CircuitState }): DynamicModule {
  @Module({
    imports: [
      ResilienceModule.forRoot({
        timeProvider: clock,
        predicates: { ...RPC_PREDICATES },
        pipelines: {
          outage: {
            retry: {
              maxRetryAttempts: FAILURES - 1,
              backoffType: 'constant',
              delay: 100,
              shouldHandle: 'rpc-retryable',
            },
            circuitBreaker: {
              kind: 'consecutive',
              failureThreshold: FAILURES,
              breakDuration: BREAK,
              shouldHandle: 'rpc-failure',
              onStateChange: ({ to }) => void (probe.state = to),
            },
            timeout: 2_000,
          },
        },
      }),
      ResilientClientsModule.register({
        imports: [ClientsModule.register([{ name: 'INVENTORY', ...options }])],
        clients: { inventory: { client: 'INVENTORY', pipeline: 'outage' } },
      }),
    ],
  })
  class OutageClientModule {}
  return { module: OutageClientModule };
}

/** Polls `condition` (real time, bounded) until it resolves true. */
async function eventually(condition: () => Promise<boolean>, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Settles within `ms` real milliseconds, or resolves `fallback`. */
function within<T>(promise: Promise<T>, ms: number, fallback: T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<T>((resolve) => (timer = setTimeout(() => resolve(fallback), ms)));
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

describe.each(cases)('a broker killed under a connected resilient client: $name', (outage) => {
  let broker: Broker | undefined;
  let server: INestMicroservice | undefined;
  let app: INestApplicationContext | undefined;
  let inventory: ResilientClientProxy;
  const clock = new FakeTimeProvider();
  const probe = { state: 'closed' as CircuitState };

  beforeAll(async () => {
    broker = await outage.start();
    server = await NestFactory.createMicroservice(
      InventoryModule.register(new InventoryState(), new FakeTimeProvider()),
      {
        ...outage.server(broker.port),
        logger: false,
      },
    );
    await server.listen();
    app = await NestFactory.createApplicationContext(clientModule(outage.client(broker.port), clock, probe), {
      logger: false,
    });
    await app.init();
    inventory = app.get<ResilientClientProxy>(getResilientClientToken('inventory'));
    await inventory.connect();
    await expect(lastValueFrom(inventory.send('inventory.echo', { n: 0 }))).resolves.toEqual({ echo: { n: 0 } });
  }, outage.budgetMs);

  afterAll(async () => {
    try {
      await broker?.restart().catch(() => undefined); // when a failure left it down: closing is quick with it there
      if (app) await within(app.close(), 5_000, undefined);
      if (server) await within(server.close(), 5_000, undefined);
    } finally {
      await broker?.stop(); // even when setting up failed half-way
    }
  }, outage.budgetMs);

  it(
    'opens the circuit, fails fast while the broker is down, and closes it through a probe once it is back',
    async () => {
      await broker!.kill();
      // The client noticed: connecting fails now, instead of a message being buffered for later.
      await eventually(
        () =>
          within(
            inventory.client.connect().then(
              () => false,
              () => true,
            ),
            1_000,
            false,
          ),
        'the client saw the broker go',
      );

      const error = await driveWithClock(lastValueFrom(inventory.send('inventory.echo', { n: 1 })), clock).catch(
        (e: unknown) => e,
      );
      expect(isRpcTransportError(error)).toBe(true);
      expect(inventory.metrics.attempts).toBe(1 + FAILURES); // the first echo, then the call and its retries
      expect(probe.state).toBe('open');

      const rejected = await lastValueFrom(inventory.send('inventory.echo', { n: 2 })).catch((e: unknown) => e);
      expect(isBrokenCircuitError(rejected)).toBe(true);
      expect(inventory.metrics.attempts).toBe(1 + FAILURES); // nothing was sent

      await broker!.restart();
      // The plain client gets an answer again once it (and the server) reconnected, on their own schedule.
      await eventually(
        () =>
          lastValueFrom(inventory.client.send('inventory.echo', { probe: true }).pipe(timeout(1_000))).then(
            () => true,
            () => false,
          ),
        'a round trip works again',
        outage.budgetMs === undefined ? undefined : outage.budgetMs / 3,
      );
      expect(probe.state).toBe('open');
      await clock.advanceAsync(BREAK); // the break is over: the next call is the half-open probe
      await expect(lastValueFrom(inventory.send('inventory.echo', { n: 3 }))).resolves.toEqual({ echo: { n: 3 } });
      expect(probe.state).toBe('closed');
    },
    outage.budgetMs,
  );
});
