import 'reflect-metadata';
import type { INestApplication, LoggerService } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { ResilienceModule, ResiliencePipelineRegistry, type TimeProvider } from '../../src/index.js';
import { ResilienceAdminModule } from '../../src/nest/admin/index.js';

/** One application instance of a fleet sharing `redis` (a URL), with the admin API's fleet view. */
export interface FleetInstanceOptions {
  readonly redisUrl: string;
  readonly keyPrefix: string;
  readonly instanceName: string;
  readonly time?: TimeProvider;
  readonly logger?: LoggerService;
  /** Listen on a loopback port (for a browser); otherwise only initialised (for supertest). */
  readonly listen?: boolean;
  /** Milliseconds between publishes. Default 1 000. */
  readonly interval?: number;
  /** The Redis store's operation timeout. Default 1 000 (generous: outcomes matter here, not speed). */
  readonly operationTimeout?: number;
}

export interface FleetInstance {
  readonly app: INestApplication;
  readonly registry: ResiliencePipelineRegistry;
  /** The dashboard's URL, when listening. */
  readonly dashboard: string | undefined;
}

export async function startFleetInstance(options: FleetInstanceOptions): Promise<FleetInstance> {
  const now = options.time ? () => options.time!.now() : undefined;
  const moduleRef = await Test.createTestingModule({
    imports: [
      ResilienceModule.forRoot({
        logging: false,
        ...(options.time ? { timeProvider: options.time } : {}),
        store: {
          redis: {
            url: options.redisUrl,
            keyPrefix: options.keyPrefix,
            retryInterval: 1_000,
            operationTimeout: options.operationTimeout ?? 1_000,
          },
        },
        pipelines: {
          payments: {
            retry: { maxRetryAttempts: 1, delay: 0 },
            circuitBreaker: { kind: 'consecutive', failureThreshold: 3, breakDuration: 10_000 },
          },
          catalog: {
            circuitBreaker: { kind: 'time-window', failureRatio: 0.5, minimumThroughput: 4, samplingDuration: 30_000 },
          },
          search: { concurrencyLimiter: { permitLimit: 4, queueLimit: 2 } },
          // No circuit: its calls never touch Redis.
          quotes: { retry: { maxRetryAttempts: 1, delay: 0 }, timeout: 5_000 },
        },
      }),
      ResilienceAdminModule.forRoot({
        unprotected: true,
        control: true,
        dashboard: true,
        fleet: { instanceName: options.instanceName, interval: options.interval ?? 1_000 },
        ...(now ? { events: { now } } : {}),
      }),
    ],
  }).compile();
  const app = moduleRef.createNestApplication({ logger: options.logger ?? false });
  let dashboard: string | undefined;
  if (options.listen) {
    await app.listen(0, '127.0.0.1');
    dashboard = `${(await app.getUrl()).replace('[::1]', '127.0.0.1')}/resilience/dashboard`;
  } else {
    await app.init();
  }
  return { app, registry: app.get(ResiliencePipelineRegistry), dashboard };
}

/** Calls of every pipeline, with operation keys: successes, some failures, one call in the limiter. */
export async function someTraffic(registry: ResiliencePipelineRegistry, rounds: number): Promise<void> {
  for (let i = 0; i < rounds; i++) {
    await registry.getPipeline('payments').execute(() => 'ok', { operationKey: i % 2 ? 'refund' : 'charge' });
    await registry
      .getPipeline('catalog')
      .executeOutcome(() => (i % 4 === 0 ? Promise.reject(new Error('x')) : 'ok'), { operationKey: 'list' });
    await registry.getPipeline('search').execute(() => 'ok', { operationKey: 'query' });
    await registry.getPipeline('quotes').execute(() => 'ok', { operationKey: 'latest' });
  }
}
