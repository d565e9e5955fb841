import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { Module, type DynamicModule, type INestApplicationContext, type INestMicroservice } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ClientProxyFactory, ClientsModule, type ClientProxy } from '@nestjs/microservices';
import { lastValueFrom, timeout, toArray } from 'rxjs';
import {
  isBrokenCircuitError,
  type CircuitState,
  type PipelineConfig,
  type RetryConfig,
} from '../../src/core.entry.js';
import {
  getResilientClientToken,
  ResilientClients,
  ResilientClientsModule,
  RPC_PREDICATES,
  type ResilientClientProxy,
} from '../../src/nest/microservices/index.js';
import { ResilienceModule } from '../../src/nest/index.js';
import { FakeTimeProvider, flushPromises } from '../../src/testing/index.js';
import { driveWithClock } from '../utils/drive.js';
import { InventoryModule, InventoryState } from './inventory.fixture.js';
import {
  freePort,
  mqttTransport,
  natsTransport,
  redisTransport,
  tcpTransport,
  waitUntil,
  type TransportUnderTest,
} from './rpc-transports.js';

const transports: TransportUnderTest[] = [tcpTransport(), redisTransport(), natsTransport(), mqttTransport()];

const ATTEMPT_TIMEOUT = 500;
const RETRY_DELAY = 100;
const BREAK = 1_000;

/** The client application: the resilient clients of the inventory service over one transport. */
function clientModule(transport: TransportUnderTest, clock: FakeTimeProvider, probe: ClientProbe): DynamicModule {
  const retry = (extra: Partial<RetryConfig> = {}): RetryConfig => ({
    maxRetryAttempts: 2,
    backoffType: 'constant',
    delay: RETRY_DELAY,
    maxDelay: 10_000,
    shouldHandle: 'rpc-retryable',
    onRetry: ({ retryDelay }) => void probe.retryDelays.push(retryDelay),
    ...extra,
  });
  const pipelines: Record<string, PipelineConfig> = {
    'rpc-test': {
      retry: retry(),
      circuitBreaker: {
        kind: 'consecutive',
        failureThreshold: 3,
        breakDuration: BREAK,
        shouldHandle: 'rpc-failure',
        onStateChange: ({ to }) => void (probe.circuit.circuitState = to),
      },
      timeout: ATTEMPT_TIMEOUT,
    },
    // No pipeline timeout: the client's replyTimeout limits each attempt, without an AbortSignal.
    'rpc-lean': { retry: retry(), circuitBreaker: { kind: 'consecutive', failureThreshold: 3, breakDuration: BREAK } },
    'rpc-capped': { retry: retry({ maxDelay: 2_000 }) },
    'rpc-deadline': { totalTimeout: 1_000, retry: retry() },
  };
  @Module({
    imports: [
      ResilienceModule.forRoot({ timeProvider: clock, predicates: { ...RPC_PREDICATES }, pipelines }),
      ResilientClientsModule.register({
        imports: [ClientsModule.register([{ name: 'INVENTORY', ...transport.client() }])],
        clients: {
          inventory: {
            client: 'INVENTORY',
            pipeline: 'rpc-test',
            patterns: { 'inventory.restock': { idempotent: true }, 'inventory.audit': { idempotent: false } },
          },
          lean: { client: 'INVENTORY', pipeline: 'rpc-lean', replyTimeout: ATTEMPT_TIMEOUT },
          capped: { client: 'INVENTORY', pipeline: 'rpc-capped' },
          deadline: { client: 'INVENTORY', pipeline: 'rpc-deadline' },
        },
      }),
    ],
  })
  class ClientAppModule {}
  return { module: ClientAppModule };
}

interface ClientProbe {
  readonly retryDelays: number[];
  readonly circuit: { circuitState: CircuitState };
}

/** Settles `promise`, advancing the client's clock by each retry delay as the retry schedules it. */
async function withRetryDelays<T>(promise: Promise<T>, clock: FakeTimeProvider, probe: ClientProbe): Promise<T> {
  let settled = false;
  promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  let advanced = 0;
  const deadline = Date.now() + 10_000;
  while (!settled && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 1));
    if (probe.retryDelays.length > advanced && clock.pendingDelays.includes(probe.retryDelays[advanced])) {
      await clock.advanceAsync(probe.retryDelays[advanced++]);
    }
  }
  return promise;
}

/**
 * Resolves once a restarted server answers the plain client. A message a broker receives before the new
 * server's subscription is lost (NATS, Redis and MQTT do not keep it), and a call sent then would wait on
 * the fake clock's attempt timeout, which nothing advances. Real time, bounded.
 */
async function untilServerAnswers(client: ClientProxy): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await lastValueFrom(client.send('inventory.echo', { ping: attempt }).pipe(timeout({ first: 1_000 })));
      return;
    } catch (error) {
      if (attempt === 30) throw error;
    }
  }
}

function pendingReplies(client: ClientProxy): number {
  return (client as unknown as { routingMap: Map<string, unknown> }).routingMap.size;
}

describe.each(transports)('resilient ClientProxy over $name', (transport) => {
  const serverClock = new FakeTimeProvider();
  let state: InventoryState;
  let server: INestMicroservice | undefined;
  let app: INestApplicationContext;
  let clock: FakeTimeProvider;
  let probe: ClientProbe;
  let inventory: ResilientClientProxy;

  async function startServer(): Promise<void> {
    server = await NestFactory.createMicroservice(InventoryModule.register(state, serverClock), {
      ...transport.server(),
      logger: false,
    });
    await server.listen();
  }

  async function stopServer(): Promise<void> {
    state.releaseAll();
    await server?.close();
    server = undefined;
  }

  beforeAll(async () => {
    await transport.setUp();
    state = new InventoryState();
    await startServer();
  });

  afterAll(async () => {
    await stopServer();
    await transport.tearDown();
  });

  beforeEach(async () => {
    Object.assign(state, new InventoryState());
    for (const key of Object.keys(state.calls)) delete state.calls[key];
    clock = new FakeTimeProvider();
    probe = { retryDelays: [], circuit: { circuitState: 'closed' } };
    app = await NestFactory.createApplicationContext(clientModule(transport, clock, probe), { logger: false });
    await app.init();
    inventory = app.get<ResilientClientProxy>(getResilientClientToken('inventory'));
    await inventory.connect();
  });

  afterEach(async () => {
    state.releaseAll();
    await app.close();
  });

  it('retries a handler that fails transiently and returns its answer', async () => {
    state.flakyFailures = 2;
    const reply = await withRetryDelays(lastValueFrom(inventory.send('inventory.flaky', { sku: 'A-1' })), clock, probe);
    expect(reply).toEqual({ sku: 'A-1', reserved: true, attempt: 3 });
    expect(state.calls['inventory.flaky']).toBe(3);
    expect(probe.retryDelays).toEqual([RETRY_DELAY, RETRY_DELAY]);
    expect(inventory.metrics).toMatchObject({ attempts: 3, succeeded: 1, failed: 0 });
    expect(probe.circuit.circuitState).toBe('closed');
  });

  const timeouts = [
    ['the pipeline timeout', 'inventory'],
    ['the reply timeout', 'lean'],
  ];

  it.each(timeouts)('retries an attempt that got no reply within %s, dropping its late reply', async (_, name) => {
    const client = app.get(ResilientClients).get(name);
    await client.connect();
    const call = lastValueFrom(client.send('inventory.hang', {}));
    await waitUntil(() => state.calls['inventory.hang'] === 1, 'the first message arrived');
    await clock.advanceAsync(ATTEMPT_TIMEOUT); // no reply: the attempt times out
    await waitUntil(() => clock.pendingDelays.includes(RETRY_DELAY), 'the retry waits');
    await clock.advanceAsync(RETRY_DELAY);
    await expect(call).resolves.toBe('answered');
    expect(state.calls['inventory.hang']).toBe(2);
    state.releaseAll(); // the first attempt's reply now comes back to nobody
    await waitUntil(() => pendingReplies(client.client) === 0, 'no reply is pending');
    expect(client.metrics).toMatchObject({ attempts: 2, succeeded: 1, failed: 0, cancelled: 0 });
  });

  it('emits every value of a multi-value reply, in order', async () => {
    await expect(lastValueFrom(inventory.send('inventory.stream', {}).pipe(toArray()))).resolves.toEqual([1, 2, 3]);
  });

  it('is cold: each subscription runs the pipeline and sends anew', async () => {
    const reply$ = inventory.send('inventory.echo', { n: 1 });
    expect(state.calls['inventory.echo']).toBeUndefined();
    await lastValueFrom(reply$);
    await lastValueFrom(reply$);
    expect(state.calls['inventory.echo']).toBe(2);
  });

  it('opens the circuit when the server is gone, fails fast, and closes it through a probe once it is back', async () => {
    await stopServer();
    try {
      const first = driveWithClock(lastValueFrom(inventory.send('inventory.echo', { n: 1 })), clock);
      await expect(first).rejects.toBeDefined();
      expect(probe.circuit.circuitState).toBe('open');
      const attempts = inventory.metrics.attempts;
      expect(attempts).toBe(3); // the first attempt and two retries, each a transport failure

      const rejected = await lastValueFrom(inventory.send('inventory.echo', { n: 2 })).catch((e: unknown) => e);
      expect(isBrokenCircuitError(rejected)).toBe(true);
      expect(inventory.metrics.attempts).toBe(attempts); // nothing was sent
    } finally {
      await startServer();
    }
    await untilServerAnswers(inventory.client);
    await clock.advanceAsync(BREAK);
    await expect(lastValueFrom(inventory.send('inventory.echo', { n: 3 }))).resolves.toEqual({ echo: { n: 3 } });
    expect(probe.circuit.circuitState).toBe('closed');
    // A real server stopped and started again: a budget for a busy machine, not a speed bound.
  }, 60_000);

  it('returns an RpcException payload at once: not retried, not counted by the breaker', async () => {
    for (let i = 0; i < 4; i++) {
      const error = await lastValueFrom(inventory.send('inventory.reject', {})).catch((e: unknown) => e);
      expect(error).toEqual({ code: 'OUT_OF_STOCK', message: 'No stock left for this SKU.' });
    }
    expect(state.calls['inventory.reject']).toBe(4);
    expect(inventory.metrics).toMatchObject({ attempts: 4, failed: 4 });
    expect(probe.retryDelays).toEqual([]);
    expect(probe.circuit.circuitState).toBe('closed');
  });

  it('waits the retryAfter of a handler behind an open circuit (capped by maxDelay, at once past the deadline)', async () => {
    state.guardedFails = true;
    await expect(lastValueFrom(inventory.client.send('inventory.guarded', {}))).rejects.toMatchObject({
      message: 'stock database down',
    }); // the server's circuit opens for 5000 ms
    state.guardedFails = false;

    const deadline = app.get(ResilientClients).get('deadline');
    const pastDeadline = await lastValueFrom(deadline.send('inventory.guarded', {})).catch((e: unknown) => e);
    expect(pastDeadline).toMatchObject({ status: 503, error: 'Service Unavailable', retryAfter: 5_000 });
    expect(deadline.metrics.attempts).toBe(1);

    const call = lastValueFrom(inventory.send('inventory.guarded', {}));
    await waitUntil(() => probe.retryDelays.length === 1, 'the retry is scheduled');
    expect(probe.retryDelays).toEqual([5_000]);
    const capped = lastValueFrom(app.get(ResilientClients).get('capped').send('inventory.guarded', {}));
    await waitUntil(() => probe.retryDelays.length === 2, 'the capped retry is scheduled');
    expect(probe.retryDelays[1]).toBe(2_000);

    serverClock.advance(5_000); // the server's circuit lets a probe through
    await clock.advanceAsync(2_000);
    await expect(capped).resolves.toEqual({ guarded: 'ok' });
    await clock.advanceAsync(3_000);
    await expect(call).resolves.toEqual({ guarded: 'ok' });
    expect(state.calls['inventory.guarded']).toBe(3); // the failure, then each client's retry
  });

  it.each(timeouts)(
    'unsubscribing mid-call drops the pending reply and %s, and counts the call as cancelled',
    async (_, name) => {
      const client = app.get(ResilientClients).get(name);
      await client.connect();
      state.hangFirstOnly = false;
      const seen: unknown[] = [];
      const subscription = client.send('inventory.hang', {}).subscribe({
        next: (v) => seen.push(v),
        error: (e) => seen.push(e),
      });
      await waitUntil(() => state.calls['inventory.hang'] === 1, 'the message arrived');
      expect(pendingReplies(client.client)).toBe(1);
      expect(clock.pendingTimerCount).toBe(1); // the attempt's timeout
      subscription.unsubscribe();
      expect(pendingReplies(client.client)).toBe(0);
      await flushPromises();
      expect(clock.pendingTimerCount).toBe(0);
      expect(client.metrics).toMatchObject({ attempts: 1, cancelled: 1, failed: 0, succeeded: 0 });
      state.releaseAll(); // the reply arrives for nobody
      await lastValueFrom(client.send('inventory.echo', { after: true }));
      expect(seen).toEqual([]);
      expect(probe.circuit.circuitState).toBe('closed');
    },
  );

  it('unsubscribing during a retry delay sends nothing more (a pipeline with a timeout also stops the delay)', async () => {
    for (const name of ['inventory', 'lean']) {
      const client = app.get(ResilientClients).get(name);
      state.flakyFailures = 1_000;
      const subscription = client.send('inventory.flaky', { sku: 'D-4' }).subscribe({ error: () => undefined });
      await waitUntil(() => clock.pendingDelays.includes(RETRY_DELAY), 'the retry waits');
      expect(client.metrics.attempts).toBe(1);
      subscription.unsubscribe();
      await flushPromises();
      if (name === 'inventory') expect(clock.pendingTimerCount).toBe(0);
      await clock.advanceAsync(RETRY_DELAY);
      await flushPromises();
      expect(clock.pendingTimerCount).toBe(0);
      expect(client.metrics).toMatchObject({ attempts: 1, cancelled: 1, failed: 0 });
    }
    expect(state.calls['inventory.flaky']).toBe(2);
  });

  it('emits events; an emit is retried only when its pattern is idempotent, a send unless it is not', async () => {
    await lastValueFrom(inventory.emit('inventory.restock', { sku: 'B-2' }), { defaultValue: undefined });
    await waitUntil(() => state.events.length === 1, 'the event arrived');
    expect(state.events).toEqual([{ sku: 'B-2' }]);

    const dead = ClientProxyFactory.create(transport.deadClient(await freePort()));
    try {
      const clients = app.get(ResilientClients);
      const unreachable = clients.wrap('unreachable', dead, {
        pipeline: 'rpc-capped',
        patterns: { 'inventory.restock': { idempotent: true }, 'inventory.audit': { idempotent: false } },
      });
      const idempotent = driveWithClock(lastValueFrom(unreachable.emit('inventory.restock', { sku: 'C-3' })), clock);
      await expect(idempotent).rejects.toBeDefined();
      expect(unreachable.metrics.attempts).toBe(3);
      const once = lastValueFrom(unreachable.emit('inventory.audit', { sku: 'C-3' }));
      await expect(once).rejects.toBeDefined();
      expect(unreachable.metrics.attempts).toBe(4);
      expect(unreachable.metrics.failed).toBe(2);
      // `send` is retried unless its pattern says it may not be repeated.
      await expect(driveWithClock(lastValueFrom(unreachable.send('inventory.echo', 1)), clock)).rejects.toBeDefined();
      expect(unreachable.metrics.attempts).toBe(7);
      await expect(lastValueFrom(unreachable.send('inventory.audit', 1))).rejects.toBeDefined();
      expect(unreachable.metrics.attempts).toBe(8);
    } finally {
      await Promise.resolve(dead.close());
    }
  });
});
