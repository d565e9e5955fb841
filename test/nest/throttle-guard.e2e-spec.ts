import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Controller, Get, Injectable, UseGuards, type ExecutionContext, type INestApplication } from '@nestjs/common';
import { APP_GUARD, HttpAdapterHost, Reflector } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import type { App } from 'supertest/types.js';
import {
  RESILIENCE_MODULE_OPTIONS,
  ResilienceModule,
  ResilienceThrottle,
  ResilienceThrottleGuard,
  ResilienceThrottler,
  ResilienceValidationError,
  SkipResilienceThrottle,
  WithCriticality,
  type ResilienceModuleOptions,
} from '../../src/index.js';
import { FakeTimeProvider } from '../../src/testing/index.js';

@Controller()
class OpenController {
  @Get('hello')
  hello(): string {
    return 'hello';
  }

  @Get('health')
  @SkipResilienceThrottle()
  health(): string {
    return 'up';
  }

  @Get('login')
  @ResilienceThrottle('login')
  login(): string {
    return 'signed in';
  }

  @Get('both')
  @ResilienceThrottle('login', 'default')
  both(): string {
    return 'both';
  }

  @Get('urgent')
  @WithCriticality('critical')
  urgent(): string {
    return 'urgent';
  }
}

@Controller('internal')
@SkipResilienceThrottle()
class InternalController {
  @Get('free')
  free(): string {
    return 'free';
  }

  @Get('limited')
  @SkipResilienceThrottle(false)
  limited(): string {
    return 'limited';
  }
}

function throttleOptions(time: FakeTimeProvider): ResilienceModuleOptions {
  return {
    timeProvider: time,
    throttle: {
      exemptCritical: true,
      limits: {
        default: { kind: 'fixed-window', permitLimit: 3, window: '1m' },
        login: { kind: 'token-bucket', tokenLimit: 2, tokensPerPeriod: 1, replenishmentPeriod: 10_000 },
      },
    },
  };
}

const headersOf = (res: request.Response) => ({
  limit: res.headers['ratelimit-limit'],
  remaining: res.headers['ratelimit-remaining'],
  reset: res.headers['ratelimit-reset'],
});

describe.each(['express', 'fastify'] as const)('ResilienceThrottleGuard as APP_GUARD (%s)', (platform) => {
  let app: INestApplication<App>;
  const time = new FakeTimeProvider(Date.UTC(2026, 0, 1));

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [ResilienceModule.forRoot(throttleOptions(time))],
      controllers: [OpenController, InternalController],
      providers: [{ provide: APP_GUARD, useClass: ResilienceThrottleGuard }],
    }).compile();
    app =
      platform === 'express'
        ? moduleRef.createNestApplication({ logger: false })
        : moduleRef.createNestApplication<NestFastifyApplication>(new FastifyAdapter(), { logger: false });
    await app.listen(0, '127.0.0.1');
  });

  afterAll(async () => {
    await app.close();
  });

  it('counts a client down with RateLimit-* headers, then answers 429 with Retry-After until the window ends', async () => {
    const server = app.getHttpServer();
    const first = await request(server).get('/hello').expect(200);
    expect(headersOf(first)).toEqual({ limit: '3', remaining: '2', reset: '60' });
    time.advance(15_000);
    expect(headersOf(await request(server).get('/hello').expect(200))).toEqual({
      limit: '3',
      remaining: '1',
      reset: '45',
    });
    // The limit is the client's, over every route that applies it.
    expect(headersOf(await request(server).get('/internal/limited').expect(200)).remaining).toBe('0');
    const rejected = await request(server).get('/hello').expect(429);
    expect(headersOf(rejected)).toEqual({ limit: '3', remaining: '0', reset: '45' });
    expect(rejected.headers['retry-after']).toBe('45');
    expect(rejected.body).toEqual({
      statusCode: 429,
      error: 'Too Many Requests',
      message: 'The rate limit of "default" is reached.',
    });
    time.advance(45_000);
    expect(headersOf(await request(server).get('/hello').expect(200))).toEqual({
      limit: '3',
      remaining: '2',
      reset: '60',
    });
    time.advance(60_000);
  });

  it('skips a route or a controller marked @SkipResilienceThrottle(), without headers', async () => {
    const server = app.getHttpServer();
    for (let i = 0; i < 5; i++) {
      const health = await request(server).get('/health').expect(200);
      expect(health.headers['ratelimit-limit']).toBeUndefined();
      await request(server).get('/internal/free').expect(200);
    }
    expect(headersOf(await request(server).get('/hello').expect(200)).remaining).toBe('2'); // untouched
    time.advance(60_000);
  });

  it('applies the limits @ResilienceThrottle names instead of the default one', async () => {
    const server = app.getHttpServer();
    expect(headersOf(await request(server).get('/login').expect(200))).toEqual({
      limit: '2',
      remaining: '1',
      reset: '10',
    });
    expect(headersOf(await request(server).get('/login').expect(200)).remaining).toBe('0');
    const rejected = await request(server).get('/login').expect(429);
    expect(rejected.headers['retry-after']).toBe('10');
    expect(rejected.body.message).toBe('The rate limit of "login" is reached.');
    expect(headersOf(await request(server).get('/hello').expect(200)).remaining).toBe('2'); // its own count
    time.advance(10_000); // one token back
    expect(headersOf(await request(server).get('/login').expect(200))).toEqual({
      limit: '2',
      remaining: '0',
      reset: '20',
    });
    time.advance(60_000);
  });

  it('takes several limits in order, reports the tightest, and stops at the first that rejects', async () => {
    const server = app.getHttpServer();
    expect(headersOf(await request(server).get('/both').expect(200))).toEqual({
      limit: '2',
      remaining: '1',
      reset: '10',
    });
    expect(headersOf(await request(server).get('/both').expect(200)).remaining).toBe('0');
    const rejected = await request(server).get('/both').expect(429);
    expect(rejected.body.message).toBe('The rate limit of "login" is reached.');
    // "default" gave two permits, not three: the rejected request never reached it.
    expect(headersOf(await request(server).get('/hello').expect(200)).remaining).toBe('0');
    time.advance(60_000);
  });

  it('lets other contexts than HTTP pass', async () => {
    const guard = new ResilienceThrottleGuard(
      app.get(ResilienceThrottler),
      new Reflector(),
      app.get(HttpAdapterHost),
      app.get<ResilienceModuleOptions>(RESILIENCE_MODULE_OPTIONS),
    );
    const rpc = { getType: () => 'rpc' } as unknown as ExecutionContext;
    await expect(guard.canActivate(rpc)).resolves.toBe(true);
  });

  it('lets critical requests through uncounted with exemptCritical (@WithCriticality or the header)', async () => {
    const server = app.getHttpServer();
    for (let i = 0; i < 4; i++) {
      const urgent = await request(server).get('/urgent').expect(200);
      expect(urgent.headers['ratelimit-limit']).toBeUndefined();
      await request(server).get('/hello').set('x-criticality', 'critical').expect(200);
    }
    expect(headersOf(await request(server).get('/hello').expect(200)).remaining).toBe('2');
    // A sheddable header on a critical route makes it count (the header overrides the decorator).
    expect(
      headersOf(await request(server).get('/urgent').set('x-criticality', 'sheddable').expect(200)).remaining,
    ).toBe('1');
    time.advance(60_000);
  });
});

describe('ResilienceThrottleGuard with @UseGuards and a key of your own', () => {
  @Controller('api')
  @UseGuards(ResilienceThrottleGuard)
  class ApiController {
    @Get('items')
    items(): string {
      return 'items';
    }
  }

  @Controller('open')
  class UnguardedController {
    @Get()
    open(): string {
      return 'open';
    }
  }

  let app: INestApplication<App>;
  const time = new FakeTimeProvider(Date.UTC(2026, 0, 1));

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        ResilienceModule.forRoot({
          timeProvider: time,
          throttle: {
            key: (req) =>
              Promise.resolve(String((req as { headers: Record<string, string> }).headers['x-api-key'] ?? 'anonymous')),
            limits: { default: { kind: 'sliding-window', permitLimit: 2, window: 10_000, segmentsPerWindow: 10 } },
          },
        }),
      ],
      controllers: [ApiController, UnguardedController],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
  });

  afterAll(async () => {
    await app.close();
  });

  it('counts each key apart, and leaves unguarded controllers alone', async () => {
    const server = app.getHttpServer();
    const as = (key: string) => request(server).get('/api/items').set('x-api-key', key);
    expect(headersOf(await as('alice').expect(200))).toEqual({ limit: '2', remaining: '1', reset: '10' });
    time.advance(3_000);
    expect(headersOf(await as('alice').expect(200))).toEqual({ limit: '2', remaining: '0', reset: '10' });
    const rejected = await as('alice').expect(429);
    expect(rejected.headers['retry-after']).toBe('7'); // the first permit leaves the window at 10 s
    expect(headersOf(await as('bob').expect(200)).remaining).toBe('1');
    for (let i = 0; i < 3; i++) {
      const open = await request(server).get('/open').set('x-api-key', 'alice').expect(200);
      expect(open.headers['ratelimit-limit']).toBeUndefined();
    }
    time.advance(7_000);
    expect(headersOf(await as('alice').expect(200))).toEqual({ limit: '2', remaining: '0', reset: '10' });
  });
});

describe('the throttle option at start-up', () => {
  @Controller()
  class MisnamedController {
    @Get('a')
    @ResilienceThrottle('lgoin')
    a(): string {
      return 'a';
    }
  }

  it('fails with one ResilienceValidationError listing every problem of the limits and the decorators', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        ResilienceModule.forRoot({
          throttle: {
            headers: 'yes',
            limits: {
              login: { kind: 'fixed-window', permitLimit: 0, window: '1 fortnight' },
              shared: { kind: 'sliding-window', permitLimit: 5, window: 1_000, distributed: true },
              burst: { kind: 'leaky-bucket', size: 3 },
            },
          },
        } as unknown as ResilienceModuleOptions),
      ],
      controllers: [MisnamedController],
    }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    const error = (await app.init().catch((e: unknown) => e)) as ResilienceValidationError;
    await app.close();
    expect(error).toBeInstanceOf(ResilienceValidationError);
    expect(error.issues.map((i) => [i.path, i.value])).toEqual([
      ['throttle.headers', 'yes'],
      ['throttle.limits.login.permitLimit', 0],
      ['throttle.limits.login.window', '1 fortnight'],
      ['throttle.limits.shared.distributed', true],
      ['throttle.limits.burst.size', 3],
      ['throttle.limits.burst.kind', 'leaky-bucket'],
      ['MisnamedController.a @ResilienceThrottle', 'lgoin'],
    ]);
    expect(error.issues.at(-1)!.rule).toBe(
      'names no limit of the module option throttle.limits (did you mean "login"?; known: login, shared)',
    );
    expect(error.issues[3].rule).toBe('needs the module option store: { redis } to share the limit in');
  });
});

describe('a subclass of ResilienceThrottleGuard, without headers', () => {
  @Injectable()
  class TenantThrottleGuard extends ResilienceThrottleGuard {
    protected override getTracker(request: unknown): string {
      return String((request as { headers: Record<string, string> }).headers['x-tenant']);
    }
  }

  @Controller('reports')
  @UseGuards(TenantThrottleGuard)
  class ReportsController {
    @Get()
    reports(): string {
      return 'reports';
    }
  }

  let app: INestApplication<App>;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        ResilienceModule.forRoot({
          timeProvider: new FakeTimeProvider(Date.UTC(2026, 0, 1)),
          throttle: { headers: false, limits: { default: { kind: 'fixed-window', permitLimit: 1, window: 5_000 } } },
        }),
      ],
      controllers: [ReportsController],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
  });

  afterAll(async () => {
    await app.close();
  });

  it('counts by its getTracker, sends no RateLimit-* header, and still answers 429 with Retry-After', async () => {
    const server = app.getHttpServer();
    const ok = await request(server).get('/reports').set('x-tenant', 'acme').expect(200);
    expect(ok.headers['ratelimit-limit']).toBeUndefined();
    const rejected = await request(server).get('/reports').set('x-tenant', 'acme').expect(429);
    expect(rejected.headers['ratelimit-remaining']).toBeUndefined();
    expect(rejected.headers['retry-after']).toBe('5');
    await request(server).get('/reports').set('x-tenant', 'globex').expect(200);
  });
});
