// The throw-away apps of the package test: what each installs next to the tarball, its source (written
// as a user would, against the published entry points) and what it must print.

/** Peers of the NestJS layer: all `nest-resilience` / `nest-resilience/nest` needs. */
export const NEST_PEERS = ['@nestjs/common', '@nestjs/core', 'reflect-metadata', 'rxjs'];

/** Every optional peer of the package; an app has only those it lists. */
export const OPTIONAL_PEERS = [
  ...NEST_PEERS,
  '@nestjs/axios',
  'axios',
  'ioredis',
  'openid-client',
  'jose',
  '@opentelemetry/api',
  '@nestjs/terminus',
  '@nestjs/microservices',
  'mqtt',
  '@nats-io/transport-node',
];

/**
 * What each entry point may import, in its declarations and its static imports: the install table of
 * README.md. Everything else must be loaded lazily (a dynamic `import()`) or not at all.
 */
export const ENTRY_PEERS: Record<string, string[]> = {
  '.': NEST_PEERS,
  './core': [],
  './config': [],
  './testing': [],
  './nest': NEST_PEERS,
  './http': [...NEST_PEERS, '@nestjs/axios', 'axios'],
  './redis': ['ioredis'],
  './oauth': ['openid-client', 'jose'],
  './nest/oauth': [...NEST_PEERS, 'openid-client', 'jose'],
  './opentelemetry': ['@opentelemetry/api'],
  './terminus': [...NEST_PEERS, '@nestjs/terminus'],
  './admin': NEST_PEERS,
  './microservices': [...NEST_PEERS, '@nestjs/microservices'],
};

export interface ConsumerAppDefinition {
  name: string;
  peers: string[];
  source: string;
  /** What `main.js` prints (one JSON line). */
  expected: unknown;
}

const core = `
import {
  BrokenCircuitError,
  ResiliencePipelineBuilder,
  TimeoutRejectedError,
  handleAllErrors,
} from 'nest-resilience/core';
import { parseDuration, STRATEGY_CATALOG } from 'nest-resilience/config';
import { FakeTimeProvider } from 'nest-resilience/testing';

const time = new FakeTimeProvider();
let calls = 0;
const pipeline = new ResiliencePipelineBuilder<string>({ name: 'consumer', timeProvider: time, random: () => 0.5 })
  .addRetry({ maxRetryAttempts: 2, delay: 100, backoffType: 'constant', shouldHandle: handleAllErrors })
  .addTimeout(1_000)
  .build();

const retried = pipeline.execute(() => {
  calls += 1;
  if (calls < 3) throw new Error('flaky');
  return 'ok after ' + String(calls) + ' calls';
});
await time.advanceAsync(200);

const slow = new ResiliencePipelineBuilder<string>({ timeProvider: time }).addTimeout(50).build();
const timedOut = slow
  .execute(({ signal }) => new Promise<string>((_resolve, reject) => {
    signal.addEventListener('abort', () => reject(signal.reason));
  }))
  .catch((error: unknown) => error);
await time.advanceAsync(50);
const timeoutError = await timedOut;

const breaker = new ResiliencePipelineBuilder<string>({ timeProvider: time })
  .addCircuitBreaker({ kind: 'consecutive', failureThreshold: 1, breakDuration: 1_000 })
  .build();
await breaker.executeOutcome(() => Promise.reject(new Error('down')));
const rejected = await breaker.executeOutcome(() => 'unreachable');

console.log(JSON.stringify({
  retried: await retried,
  timeout: timeoutError instanceof TimeoutRejectedError,
  broken: !rejected.ok && rejected.error instanceof BrokenCircuitError,
  configDuration: parseDuration('2s'),
  outermostSection: STRATEGY_CATALOG[0].name,
}));
`;

const nest = `
import 'reflect-metadata';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ResilienceModule, Retry, ResiliencePipelineRegistry } from 'nest-resilience';
import { AttemptTimeout } from 'nest-resilience/nest';

@Injectable()
class FlakyService {
  calls = 0;

  @Retry({ maxRetryAttempts: 2, delay: 1 })
  @AttemptTimeout(1_000)
  async load(): Promise<string> {
    this.calls += 1;
    if (this.calls < 3) throw new Error('flaky');
    return 'loaded after ' + String(this.calls) + ' calls';
  }
}

@Module({
  imports: [ResilienceModule.forRoot({ pipelines: { catalog: { retry: { maxRetryAttempts: 1, delay: 1 } } } })],
  providers: [FlakyService],
})
class AppModule {}

const app = await NestFactory.createApplicationContext(AppModule, { logger: false });
const service = app.get(FlakyService);
const registry = app.get(ResiliencePipelineRegistry);
let attempts = 0;
const fromRegistry = await registry.getPipeline('catalog').execute(() => {
  attempts += 1;
  if (attempts === 1) throw new Error('first attempt fails');
  return attempts;
});
console.log(JSON.stringify({ decorated: await service.load(), fromRegistry }));
await app.close();
`;

const http = `
import 'reflect-metadata';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ResilienceModule } from 'nest-resilience';
import { ResilientHttpClient, ResilientHttpModule } from 'nest-resilience/http';

let requests = 0;
const upstream = createServer((_request, response) => {
  requests += 1;
  if (requests === 1) {
    response.writeHead(503).end();
    return;
  }
  response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ name: 'widget' }));
});
await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
const { port } = upstream.address() as AddressInfo;

@Module({
  imports: [
    ResilienceModule.forRoot(),
    ResilientHttpModule.register({ baseURL: 'http://127.0.0.1:' + String(port), pipeline: { retry: { delay: '1ms' } } }),
  ],
})
class AppModule {}

const app = await NestFactory.createApplicationContext(AppModule, { logger: false });
const client = app.get(ResilientHttpClient);
const response = await client.get<{ name: string }>('/products/1');
console.log(JSON.stringify({ status: response.status, data: response.data, requests }));
await app.close();
upstream.close();
`;

const redis = `
import { Redis } from 'ioredis';
import { BrokenCircuitError, ResiliencePipelineBuilder } from 'nest-resilience/core';
import { RedisCircuitBreakerStateStore } from 'nest-resilience/redis';

const client = new Redis(process.env.REDIS_URL!, { keyPrefix: '', lazyConnect: true });
await client.connect();
const circuitKey = 'consumer-' + String(process.pid) + '-' + String(Date.now());
const stores = [0, 1].map(() => new RedisCircuitBreakerStateStore({ client, keyPrefix: 'consumer-app' }));
const [first, second] = stores.map((stateStore) =>
  new ResiliencePipelineBuilder<string>()
    .addCircuitBreaker({ kind: 'consecutive', failureThreshold: 1, breakDuration: 60_000, stateStore, circuitKey })
    .build(),
);
await first.executeOutcome(() => Promise.reject(new Error('down')));
const seenElsewhere = await second.executeOutcome(() => 'unreachable');
console.log(JSON.stringify({ openOnOtherInstance: !seenElsewhere.ok && seenElsewhere.error instanceof BrokenCircuitError }));
for (const store of stores) await store.flush();
await client.quit();
`;

const oauth = `
import { calculateCodeChallenge, generateCodeVerifier, InMemoryPendingAuthorizationStore, OAuthClient } from 'nest-resilience/oauth';

const verifier = generateCodeVerifier();
const client = new OAuthClient({
  issuer: 'https://login.example.test',
  endpoints: {
    authorization: 'https://login.example.test/authorize',
    token: 'https://login.example.test/token',
    jwks: 'https://login.example.test/jwks',
  },
  clientId: 'consumer',
  redirectUri: 'https://app.example.test/callback',
  pendingStore: new InMemoryPendingAuthorizationStore(),
});
const login = await client.startLogin({ returnTo: '/home' });
const url = new URL(login.authorizationUrl);
console.log(JSON.stringify({
  verifierLength: verifier.length,
  challengeLength: calculateCodeChallenge(verifier).length,
  endpoint: url.origin + url.pathname,
  method: url.searchParams.get('code_challenge_method'),
  clientId: url.searchParams.get('client_id'),
}));
`;

const nestOAuth = `
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ResilienceModule } from 'nest-resilience';
import { OAuthClientService, OAuthModule } from 'nest-resilience/nest/oauth';

@Module({
  imports: [
    ResilienceModule.forRoot({}),
    OAuthModule.register({
      issuer: 'https://login.example.test',
      endpoints: {
        authorization: 'https://login.example.test/authorize',
        token: 'https://login.example.test/token',
        jwks: 'https://login.example.test/jwks',
      },
      clientId: 'consumer',
      redirectUri: 'https://app.example.test/callback',
    }),
  ],
})
class AppModule {}

const app = await NestFactory.createApplicationContext(AppModule, { logger: false });
const login = await app.get(OAuthClientService).startLogin();
const url = new URL(login.authorizationUrl);
console.log(JSON.stringify({ endpoint: url.origin + url.pathname, method: url.searchParams.get('code_challenge_method') }));
await app.close();
`;

const openTelemetry = `
import { ResiliencePipelineBuilder } from 'nest-resilience/core';
import { OpenTelemetryListener } from 'nest-resilience/opentelemetry';

// No SDK registered: the global providers are no-ops, and the pipeline runs as usual.
const pipeline = new ResiliencePipelineBuilder<string>({ name: 'otel', telemetryListeners: [new OpenTelemetryListener()] })
  .addRetry({ maxRetryAttempts: 1, delay: 1 })
  .build();
let calls = 0;
const result = await pipeline.execute(() => {
  calls += 1;
  if (calls === 1) throw new Error('first call fails');
  return 'ok';
});
console.log(JSON.stringify({ result, calls }));
`;

const terminus = `
import 'reflect-metadata';
import { Injectable, Module, ServiceUnavailableException } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { HealthCheckService, type HealthCheckResult } from '@nestjs/terminus';
import { ResilienceModule, ResiliencePipelineRegistry } from 'nest-resilience';
import { FakeTimeProvider } from 'nest-resilience/testing';
import { ResilienceHealthIndicator, ResilienceHealthModule } from 'nest-resilience/terminus';

@Injectable()
class HealthProbe {
  constructor(
    private readonly health: HealthCheckService,
    private readonly resilience: ResilienceHealthIndicator,
  ) {}

  /** What a \`@HealthCheck()\` route would answer: the result, or the body of its 503. */
  async check(): Promise<HealthCheckResult> {
    try {
      return await this.health.check([() => this.resilience.isHealthy('resilience')]);
    } catch (error) {
      if (error instanceof ServiceUnavailableException) return error.getResponse() as HealthCheckResult;
      throw error;
    }
  }
}

const breaker = { kind: 'consecutive', failureThreshold: 1, breakDuration: 60_000 } as const;

@Module({
  imports: [
    ResilienceModule.forRoot({
      logging: false,
      timeProvider: new FakeTimeProvider(),
      pipelines: { payments: { circuitBreaker: breaker }, search: { circuitBreaker: breaker } },
    }),
    // payments is critical: open means down. Other circuits: open is degraded.
    ResilienceHealthModule.forRoot({ pipelines: { payments: { down: ['open', 'half-open', 'isolated'] } } }),
  ],
  providers: [HealthProbe],
})
class AppModule {}

const app = await NestFactory.createApplicationContext(AppModule, { logger: false });
const registry = app.get(ResiliencePipelineRegistry);
const probe = app.get(HealthProbe);
const report = async () => {
  const result = await probe.check();
  return { status: result.status, circuits: result.details['resilience']?.['circuits'] as unknown };
};
const fail = () => Promise.reject(new Error('down'));

await registry.getPipeline('payments').execute(() => 'ok');
await registry.getPipeline('search').execute(() => 'ok');
const closed = await report();
await registry.getPipeline('search').executeOutcome(fail);
const searchOpen = await report();
await registry.getPipeline('payments').executeOutcome(fail);
const paymentsOpen = await report();
console.log(JSON.stringify({ closed, searchOpen, paymentsOpen }));
await app.close();
`;

const admin = `
import 'reflect-metadata';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Injectable, Module, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ResilienceModule, ResiliencePipelineRegistry } from 'nest-resilience';
import { ResilienceAdminModule, type AdminPipelineDescription } from 'nest-resilience/admin';

/** The app's own guard: only operators see the admin API. */
@Injectable()
class OperatorGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<{ headers: Record<string, string | string[] | undefined> }>();
    return request.headers['x-operator'] === 'on-call';
  }
}

@Module({
  imports: [
    ResilienceModule.forRoot({
      logging: false,
      pipelines: {
        catalog: {
          retry: { maxRetryAttempts: 1, delay: 1 },
          circuitBreaker: { kind: 'consecutive', failureThreshold: 1, breakDuration: 60_000 },
        },
      },
    }),
    ResilienceAdminModule.forRoot({ guards: [OperatorGuard] }),
  ],
})
class AppModule {}

const app = await NestFactory.create(AppModule, { logger: false });
await app.listen(0, '127.0.0.1');
const { port } = (app.getHttpServer() as Server).address() as AddressInfo;
const base = 'http://127.0.0.1:' + String(port) + '/resilience';
await app
  .get(ResiliencePipelineRegistry)
  .getPipeline('catalog')
  .executeOutcome(() => Promise.reject(new Error('down')));

const operator = { headers: { 'x-operator': 'on-call' } };
const anonymous = await fetch(base + '/circuits');
await anonymous.body?.cancel();
const circuitsResponse = await fetch(base + '/circuits', operator);
const circuits = (await circuitsResponse.json()) as { pipelineName: string; state: string; failures: number }[];
const pipelines = (await (await fetch(base + '/pipelines', operator)).json()) as AdminPipelineDescription[];
console.log(JSON.stringify({
  anonymous: anonymous.status,
  operator: circuitsResponse.status,
  circuits: circuits.map(({ pipelineName, state, failures }) => ({ pipelineName, state, failures })),
  pipelines: pipelines.map(({ name, strategies }) => ({ name, strategies: strategies.map((s) => s.type) })),
}));
await app.close();
`;

const microservices = `
import 'reflect-metadata';
import type { AddressInfo, Server } from 'node:net';
import { Controller, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { MessagePattern, Payload, RpcException, Transport, type MicroserviceOptions } from '@nestjs/microservices';
import { lastValueFrom } from 'rxjs';
import { ResilienceModule } from 'nest-resilience';
import { ResilientClients, ResilientClientsModule } from 'nest-resilience/microservices';

interface Reservation {
  sku: string;
  reserved: boolean;
}

let handled = 0;

@Controller()
class InventoryController {
  @MessagePattern('stock.reserve')
  reserve(@Payload() order: { sku: string }): Reservation {
    handled += 1;
    if (handled === 1) throw new RpcException({ status: 503, message: 'warming up' });
    return { sku: order.sku, reserved: true };
  }
}

@Module({ controllers: [InventoryController] })
class InventoryModule {}

const server = await NestFactory.createMicroservice<MicroserviceOptions>(InventoryModule, {
  transport: Transport.TCP,
  options: { host: '127.0.0.1', port: 0 },
  logger: false,
});
await server.listen();
const { port } = server.unwrap<Server>().address() as AddressInfo;

@Module({
  imports: [
    ResilienceModule.forRoot({ logging: false }),
    ResilientClientsModule.register({
      clients: {
        inventory: {
          client: { transport: Transport.TCP, options: { host: '127.0.0.1', port } },
          pipeline: { retry: { maxRetryAttempts: 2, delay: 1 } },
          // A 503 from the handler is worth another try; other errors it returns are final.
          retryRemoteErrors: (error) => (error as { status?: unknown }).status === 503,
        },
      },
    }),
  ],
})
class OrdersModule {}

const app = await NestFactory.createApplicationContext(OrdersModule, { logger: false });
const inventory = app.get(ResilientClients).get('inventory');
const reply = await lastValueFrom(inventory.send<Reservation>('stock.reserve', { sku: 'widget' }));
const unserved = await lastValueFrom(inventory.send('stock.unknown', {})).catch((error: unknown) => error);
console.log(JSON.stringify({ reply, handled, unserved, metrics: inventory.metrics }));
await app.close();
await server.close();
`;

export const consumerApps: ConsumerAppDefinition[] = [
  {
    name: 'core-only',
    peers: [],
    source: core,
    expected: {
      retried: 'ok after 3 calls',
      timeout: true,
      broken: true,
      configDuration: 2000,
      outermostSection: 'fallback',
    },
  },
  {
    name: 'nest',
    peers: NEST_PEERS,
    source: nest,
    expected: { decorated: 'loaded after 3 calls', fromRegistry: 2 },
  },
  {
    name: 'http',
    peers: [...NEST_PEERS, '@nestjs/axios', 'axios'],
    source: http,
    expected: { status: 200, data: { name: 'widget' }, requests: 2 },
  },
  {
    name: 'redis',
    peers: ['ioredis'],
    source: redis,
    expected: { openOnOtherInstance: true },
  },
  {
    name: 'oauth',
    peers: ['openid-client', 'jose'],
    source: oauth,
    expected: {
      verifierLength: 43,
      challengeLength: 43,
      endpoint: 'https://login.example.test/authorize',
      method: 'S256',
      clientId: 'consumer',
    },
  },
  {
    name: 'nest-oauth',
    peers: [...NEST_PEERS, 'openid-client', 'jose'],
    source: nestOAuth,
    expected: { endpoint: 'https://login.example.test/authorize', method: 'S256' },
  },
  {
    name: 'opentelemetry',
    peers: ['@opentelemetry/api'],
    source: openTelemetry,
    expected: { result: 'ok', calls: 2 },
  },
  {
    name: 'terminus',
    peers: [...NEST_PEERS, '@nestjs/terminus'],
    source: terminus,
    expected: {
      closed: {
        status: 'ok',
        circuits: {
          payments: { status: 'up', state: 'closed', failureRatio: 0 },
          search: { status: 'up', state: 'closed', failureRatio: 0 },
        },
      },
      searchOpen: {
        status: 'degraded',
        circuits: {
          payments: { status: 'up', state: 'closed', failureRatio: 0 },
          search: { status: 'degraded', state: 'open', failureRatio: 1, retryAfter: 60_000 },
        },
      },
      paymentsOpen: {
        status: 'error',
        circuits: {
          payments: { status: 'down', state: 'open', failureRatio: 1, retryAfter: 60_000 },
          search: { status: 'degraded', state: 'open', failureRatio: 1, retryAfter: 60_000 },
        },
      },
    },
  },
  {
    // The admin API needs nothing beyond the NestJS set; serving it over HTTP takes the app's platform.
    name: 'admin',
    peers: [...NEST_PEERS, '@nestjs/platform-express'],
    source: admin,
    expected: {
      anonymous: 403,
      operator: 200,
      circuits: [{ pipelineName: 'catalog', state: 'open', failures: 1 }],
      pipelines: [{ name: 'catalog', strategies: ['retry', 'circuit-breaker'] }],
    },
  },
  {
    name: 'microservices',
    peers: [...NEST_PEERS, '@nestjs/microservices'],
    source: microservices,
    expected: {
      reply: { sku: 'widget', reserved: true },
      handled: 2,
      // Nobody serves the pattern: the handler side answers an error, which is not retried.
      unserved: 'There is no matching message handler defined in the remote service.',
      metrics: { attempts: 3, succeeded: 1, failed: 1, cancelled: 0 },
    },
  },
];
