import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Controller, Get, Injectable, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { CapturingLogger } from '../utils/capturing.logger.js';
import request from 'supertest';
import type { App } from 'supertest/types.js';
import {
  Bulkhead,
  ConcurrencyLimit,
  Hedging,
  RateLimit,
  RateLimiterRejectedError,
  ResilienceModule,
  ResiliencePipelineRegistry,
  Retry,
} from '../../src/index.js';
import { FakeTimeProvider } from '../../src/testing/index.js';
import { deferred } from '../utils/flaky.js';

const gate = { current: deferred<string>() };

@Injectable()
class SearchService {
  hedgedCalls = 0;

  @RateLimit('search')
  byName(): string {
    return 'by name';
  }

  @RateLimit('search')
  byTag(): string {
    return 'by tag';
  }

  @Bulkhead(1)
  exclusive(): Promise<string> {
    return gate.current.promise;
  }

  @Hedging({ delay: 0, maxHedgedAttempts: 2 })
  @Retry({ maxRetryAttempts: 0 })
  async hedged(): Promise<string> {
    return `attempt ${++this.hedgedCalls}`;
  }
}

@Controller()
class LimitsController {
  constructor(private readonly search: SearchService) {}

  @Get('limited')
  @RateLimit({ kind: 'fixed-window', permitLimit: 2, window: 60_000 })
  limited(): string {
    return 'ok';
  }

  @Get('configured')
  @ConcurrencyLimit('search')
  configured(): string {
    return 'ok';
  }

  @Get('by-name')
  byName(): string {
    return this.search.byName();
  }
}

describe('rate limiting, bulkhead and hedging decorators', () => {
  let app: INestApplication<App>;
  let search: SearchService;
  const logger = new CapturingLogger();
  const time = new FakeTimeProvider(Date.now());

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        ResilienceModule.forRoot({
          timeProvider: time,
          pipelines: {
            search: {
              rateLimiter: { kind: 'token-bucket', tokenLimit: 3, replenishmentPeriod: 10_000 },
              concurrencyLimiter: { permitLimit: 5, queueLimit: 0 },
            },
          },
        }),
      ],
      controllers: [LimitsController],
      providers: [SearchService],
    }).compile();
    app = moduleRef.createNestApplication({ logger });
    await app.init();
    search = app.get(SearchService);
  });

  afterAll(async () => {
    await app.close();
  });

  it('answers a rate-limited route with 429 and Retry-After', async () => {
    await request(app.getHttpServer()).get('/limited').expect(200);
    await request(app.getHttpServer()).get('/limited').expect(200);
    const res = await request(app.getHttpServer()).get('/limited').expect(429);
    expect(res.headers['retry-after']).toBe('60');
    expect(res.body).toMatchObject({ statusCode: 429, error: 'Too Many Requests' });
  });

  it('shares one named limiter between every method (and route) naming the pipeline', async () => {
    const first = search.byName(); // a synchronous method's result arrives as a promise
    expect(first).toBeInstanceOf(Promise);
    await expect(first).resolves.toBe('by name');
    await expect(search.byTag()).resolves.toBe('by tag');
    await expect(search.byName()).resolves.toBe('by name');
    await expect(search.byTag()).rejects.toBeInstanceOf(RateLimiterRejectedError);
    await request(app.getHttpServer()).get('/by-name').expect(429);
    time.advance(10_000);
    await expect(search.byTag()).resolves.toBe('by tag');
    const registry = app.get(ResiliencePipelineRegistry);
    // The pipeline itself draws from the same bucket, which the last call emptied.
    await expect(registry.getPipeline('search').execute(() => 'direct')).rejects.toBeInstanceOf(
      RateLimiterRejectedError,
    );
  });

  it('limits concurrency with @Bulkhead and rejects beyond it', async () => {
    gate.current = deferred<string>();
    const first = search.exclusive();
    await expect(search.exclusive()).rejects.toBeInstanceOf(RateLimiterRejectedError);
    gate.current.resolve('done');
    await expect(first).resolves.toBe('done');
  });

  it('hedges a method (parallel mode: the first answer wins)', async () => {
    await expect(search.hedged()).resolves.toMatch(/^attempt \d$/);
    expect(search.hedgedCalls).toBe(3);
  });

  it('composes limits in the documented order', () => {
    expect(logger.debugs).toContain('SearchService.hedged: Hedging(inline) → Retry(inline) → hedged');
    expect(logger.debugs).toContain('LimitsController.configured: ConcurrencyLimit(search) → configured');
  });
});
