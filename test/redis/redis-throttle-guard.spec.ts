import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Controller, Get, type INestApplication } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import type { App } from 'supertest/types.js';
import { ResilienceModule, ResilienceThrottle, ResilienceThrottleGuard } from '../../src/index.js';
import { FakeTimeProvider } from '../../src/testing/index.js';
import { uniquePrefix } from './redis-test.utils.js';

@Controller()
class ApiController {
  @Get('items')
  items(): string {
    return 'items';
  }

  @Get('login')
  @ResilienceThrottle('login')
  login(): string {
    return 'signed in';
  }
}

describe('ResilienceThrottleGuard with distributed limits in Redis', () => {
  const apps: INestApplication<App>[] = [];
  const time = new FakeTimeProvider(Date.UTC(2026, 0, 1));
  const keyPrefix = uniquePrefix('throttle');

  beforeAll(async () => {
    for (let i = 0; i < 2; i++) {
      const moduleRef = await Test.createTestingModule({
        imports: [
          ResilienceModule.forRoot({
            timeProvider: time,
            store: { redis: { url: process.env.REDIS_URL, keyPrefix, operationTimeout: 2_000 } },
            throttle: {
              key: (req) => String((req as { headers: Record<string, string> }).headers['x-client']),
              limits: {
                default: { kind: 'sliding-window', permitLimit: 3, window: 60_000, distributed: true },
                login: { kind: 'token-bucket', tokenLimit: 2, replenishmentPeriod: 10_000, distributed: true },
              },
            },
          }),
        ],
        controllers: [ApiController],
        providers: [{ provide: APP_GUARD, useClass: ResilienceThrottleGuard }],
      }).compile();
      const app = moduleRef.createNestApplication<INestApplication<App>>({ logger: false });
      await app.init();
      apps.push(app);
    }
  });

  afterAll(async () => {
    await Promise.all(apps.map((app) => app.close()));
  });

  const call = (instance: number, path: string, client: string) =>
    request(apps[instance].getHttpServer()).get(path).set('x-client', client);
  const figures = (res: request.Response) => [
    res.status,
    res.headers['ratelimit-limit'],
    res.headers['ratelimit-remaining'],
    res.headers['ratelimit-reset'],
  ];

  it('two instances share each client\u2019s sliding window, with its figures and Retry-After', async () => {
    expect(figures(await call(0, '/items', 'alice'))).toEqual([200, '3', '2', '60']);
    time.advance(20_000);
    expect(figures(await call(1, '/items', 'alice'))).toEqual([200, '3', '1', '60']);
    expect(figures(await call(0, '/items', 'alice'))).toEqual([200, '3', '0', '60']);
    const rejected = await call(1, '/items', 'alice');
    expect(figures(rejected)).toEqual([429, '3', '0', '60']);
    expect(rejected.headers['retry-after']).toBe('40'); // the first permit leaves the window 40 s from now
    expect(figures(await call(1, '/items', 'bob'))).toEqual([200, '3', '2', '60']);
    time.advance(40_000);
    expect(figures(await call(1, '/items', 'alice'))).toEqual([200, '3', '0', '60']);
  });

  it('two instances share each client\u2019s token bucket', async () => {
    expect(figures(await call(0, '/login', 'carol'))).toEqual([200, '2', '1', '10']);
    expect(figures(await call(1, '/login', 'carol'))).toEqual([200, '2', '0', '20']);
    const rejected = await call(0, '/login', 'carol');
    expect(figures(rejected)).toEqual([429, '2', '0', '20']);
    expect(rejected.headers['retry-after']).toBe('10');
    time.advance(10_000);
    expect(figures(await call(0, '/login', 'carol'))).toEqual([200, '2', '0', '20']);
  });
});
