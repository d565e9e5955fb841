import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Inject, Injectable } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import type { AxiosResponse } from 'axios';
import {
  DEFAULT_CRITICALITY_HEADER,
  REQUEST_DEADLINE_HEADER,
  ResilienceModule,
  AttemptTimeout,
  WithCriticality,
} from '../../../src/nest/index.js';
import { getResilientHttpClientToken, ResilientHttpClient, ResilientHttpModule } from '../../../src/nest/http/index.js';
import { json, Replica } from '../http/replica.server.js';

@Injectable()
class Catalog {
  constructor(@Inject(ResilientHttpClient) private readonly http: ResilientHttpClient) {}

  /** The request is made before the first `await`: it inherits this call's deadline. */
  @AttemptTimeout(700)
  product(url: string): Promise<AxiosResponse> {
    return this.http.get(url);
  }

  /** The same, for a call that may be shed: the service called sees its criticality. */
  @AttemptTimeout(700)
  @WithCriticality('sheddable')
  recommendations(url: string): Promise<AxiosResponse> {
    return this.http.get(url);
  }
}

describe('the resilient HTTP client sends the budget left on every attempt', () => {
  let replica: Replica;
  let moduleRef: TestingModule;
  let budgets: (string | undefined)[];
  let criticalities: (string | undefined)[] = [];
  let failures: number;

  beforeAll(async () => {
    replica = await new Replica('upstream', (req, res) => {
      budgets.push(req.headers[REQUEST_DEADLINE_HEADER] as string | undefined);
      criticalities.push(req.headers[DEFAULT_CRITICALITY_HEADER] as string | undefined);
      if (failures-- > 0) json(res, 503, { busy: true });
      else json(res, 200, { ok: true });
    }).start();
    const pipeline = {
      retry: { maxRetryAttempts: 3, delay: 100, useJitter: false },
      circuitBreaker: false as const,
      attemptTimeout: 1_000,
      totalTimeout: 1_050,
    };
    moduleRef = await Test.createTestingModule({
      imports: [
        ResilienceModule.forRoot({}),
        ResilientHttpModule.register({ baseURL: replica.url, pipeline }),
        ResilientHttpModule.register({ name: 'quiet', baseURL: replica.url, pipeline, propagateDeadline: false }),
      ],
      providers: [Catalog],
    }).compile();
    await moduleRef.init();
  });

  afterAll(async () => {
    await moduleRef.close();
    await replica.stop();
  });

  it("sends the tighter of the attempt timeout and what is left of the total, shrinking with each retry's wait", async () => {
    budgets = [];
    failures = 2;
    const response = await moduleRef.get(ResilientHttpClient).get('/item');
    expect(response.status).toBe(200);
    const sent = budgets.map(Number);
    expect(sent).toHaveLength(3);
    // Each retry waits at least 100 ms: attempt n has at most 1050 − 100·n left (and never more than 1000).
    sent.forEach((budget, n) => {
      expect(budget).toBeGreaterThan(0);
      expect(budget).toBeLessThanOrEqual(Math.min(1_000, 1_050 - 100 * n));
    });
  });

  it("a request made in a decorated method sends at most that method's deadline", async () => {
    budgets = [];
    failures = 0;
    await moduleRef.get(Catalog).product('/item');
    expect(Number(budgets[0])).toBeGreaterThan(0);
    expect(Number(budgets[0])).toBeLessThanOrEqual(700);
  });

  it("sends the calling method's criticality with the budget (and none for a default call)", async () => {
    criticalities = [];
    failures = 0;
    await moduleRef.get(Catalog).recommendations('/item');
    await moduleRef.get(Catalog).product('/item');
    expect(criticalities).toEqual(['sheddable', undefined]);
  });

  it('sends nothing with propagateDeadline: false', async () => {
    budgets = [];
    criticalities = [];
    failures = 0;
    await moduleRef.get<ResilientHttpClient>(getResilientHttpClientToken('quiet')).get('/item');
    expect(budgets).toEqual([undefined]);
    expect(criticalities).toEqual([undefined]);
  });
});
