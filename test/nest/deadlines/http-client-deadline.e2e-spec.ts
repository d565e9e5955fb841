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
import {
  getResilientHttpClientToken,
  ResilientHttpClient,
  ResilientHttpModule,
  type StandardHedgingHandlerOptions,
} from '../../../src/nest/http/index.js';
import { FakeTimeProvider } from '../../../src/testing/index.js';
import { json, Replica } from '../http/replica.server.js';
import { waitUntil } from '../../microservices/rpc-transports.js';

@Injectable()
class Catalog {
  constructor(@Inject(ResilientHttpClient) private readonly http: ResilientHttpClient) {}

  /** The request is made before the first `await`: it inherits this call's deadline. */
  @AttemptTimeout(7_000)
  product(url: string): Promise<AxiosResponse> {
    return this.http.get(url);
  }

  /** The same, for a call that may be shed: the service called sees its criticality. */
  @AttemptTimeout(7_000)
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
      // Budgets far above what a busy machine takes for three local requests: the bounds below are exact.
      attemptTimeout: 10_000,
      totalTimeout: 10_050,
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
    // Each retry waits at least 100 ms: attempt n has at most 10050 − 100·n left (and never more than 10000).
    sent.forEach((budget, n) => {
      expect(budget).toBeGreaterThan(0);
      expect(budget).toBeLessThanOrEqual(Math.min(10_000, 10_050 - 100 * n));
    });
  });

  it("a request made in a decorated method sends at most that method's deadline", async () => {
    budgets = [];
    failures = 0;
    await moduleRef.get(Catalog).product('/item');
    expect(Number(budgets[0])).toBeGreaterThan(0);
    expect(Number(budgets[0])).toBeLessThanOrEqual(7_000);
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

@Injectable()
class HedgedCatalog {
  constructor(@Inject(getResilientHttpClientToken('hedged')) private readonly http: ResilientHttpClient) {}

  /** Made before the first `await`: the hedged request inherits this call's deadline and criticality. */
  @AttemptTimeout(700)
  @WithCriticality('sheddable')
  product(): Promise<AxiosResponse> {
    return this.http.get('/item');
  }
}

describe('the standard hedging handler sends the budget left on every hedged attempt', () => {
  const clock = new FakeTimeProvider();
  const replicas = [new Replica('a'), new Replica('b'), new Replica('c')];
  const sent: { replica: string; budget: unknown; criticality: unknown }[] = [];
  let moduleRef: TestingModule;

  beforeAll(async () => {
    for (const replica of replicas) {
      // The first two never answer (each is hedged after the delay); the third answers at once.
      replica.handler = (req, res) => {
        sent.push({
          replica: replica.name,
          budget: req.headers[REQUEST_DEADLINE_HEADER],
          criticality: req.headers[DEFAULT_CRITICALITY_HEADER],
        });
        if (replica.name === 'c') json(res, 200, { server: 'c' });
      };
      await replica.start();
    }
    const hedging: StandardHedgingHandlerOptions = {
      routing: { groups: replicas.map((r) => ({ endpoints: [r.url] })) },
      totalTimeout: 1_000,
      hedging: { delay: 100, maxHedgedAttempts: 2 },
      endpoint: { attemptTimeout: 1_000, circuitBreaker: false },
    };
    moduleRef = await Test.createTestingModule({
      imports: [
        ResilienceModule.forRoot({ timeProvider: clock }),
        ResilientHttpModule.register({ name: 'hedged', hedging }),
        ResilientHttpModule.register({ name: 'hedged-quiet', hedging, propagateDeadline: false }),
        ResilientHttpModule.register({
          name: 'hedged-tight',
          hedging: { ...hedging, endpoint: { ...hedging.endpoint, attemptTimeout: 850 } },
        }),
      ],
      providers: [HedgedCatalog],
    }).compile();
    await moduleRef.init();
  });

  afterAll(async () => {
    await moduleRef.close();
    await Promise.all(replicas.map((r) => r.stop()));
  });

  /** Sends a request, moving the clock by the hedging delay each time the newest attempt has arrived. */
  async function hedged(send: () => Promise<AxiosResponse>): Promise<AxiosResponse> {
    sent.length = 0;
    const response = send();
    for (const count of [1, 2]) {
      await waitUntil(() => sent.length === count, `attempt ${count} reached its replica`);
      await clock.advanceAsync(100);
    }
    return response;
  }

  it('each attempt carries what is left of the total timeout when it starts: 1000, 900, 800', async () => {
    const http = moduleRef.get<ResilientHttpClient>(getResilientHttpClientToken('hedged'));
    const response = await hedged(() => http.get('/item'));
    expect(response.data).toEqual({ server: 'c' });
    expect(sent).toEqual([
      { replica: 'a', budget: '1000', criticality: undefined },
      { replica: 'b', budget: '900', criticality: undefined },
      { replica: 'c', budget: '800', criticality: undefined },
    ]);
  });

  it("a hedged request made in a decorated method sends at most that method's budget, and its criticality", async () => {
    const response = await hedged(() => moduleRef.get(HedgedCatalog).product());
    expect(response.data).toEqual({ server: 'c' });
    expect(sent).toEqual([
      { replica: 'a', budget: '700', criticality: 'sheddable' },
      { replica: 'b', budget: '600', criticality: 'sheddable' },
      { replica: 'c', budget: '500', criticality: 'sheddable' },
    ]);
  });

  it('an attempt timeout shorter than what is left of the total tightens the budget sent', async () => {
    const http = moduleRef.get<ResilientHttpClient>(getResilientHttpClientToken('hedged-tight'));
    await hedged(() => http.get('/item'));
    expect(sent.map((s) => s.budget)).toEqual(['850', '850', '800']);
  });

  it('sends nothing with propagateDeadline: false', async () => {
    const http = moduleRef.get<ResilientHttpClient>(getResilientHttpClientToken('hedged-quiet'));
    await hedged(() => http.get('/item'));
    expect(sent.map((s) => [s.budget, s.criticality])).toEqual([
      [undefined, undefined],
      [undefined, undefined],
      [undefined, undefined],
    ]);
  });
});
