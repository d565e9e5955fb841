import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ClientProxyFactory, Transport } from '@nestjs/microservices';
import { lastValueFrom } from 'rxjs';
import request from 'supertest';
import { getCriticality } from '../../../src/index.js';
import { DEFAULT_CRITICALITY_HEADER, REQUEST_DEADLINE_HEADER } from '../../../src/nest/index.js';
import { startTwoServices } from './two-services.fixture.js';

describe('deadlines across services: HTTP → A → RPC → B', () => {
  let services: Awaited<ReturnType<typeof startTwoServices>>;

  beforeAll(async () => {
    services = await startTwoServices();
  });

  afterAll(async () => {
    await services.close();
  });

  const quote = (headers: Record<string, string> = {}) =>
    request(services.a.getHttpServer()).get('/quote').set(headers);
  const lastSeen = () => services.state.seenByB.at(-1)!;

  it("B's handler sees at most the budget A was given, and the data without the budget field", async () => {
    const response = await quote({ [REQUEST_DEADLINE_HEADER]: '1500' });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({ sku: 'A-1', price: 42 });
    expect(lastSeen().budget).toBeGreaterThan(0);
    expect(lastSeen().budget).toBeLessThanOrEqual(1_500);
    expect(lastSeen().data).toEqual({ sku: 'A-1' });
  });

  it('reads grpc-timeout syntax too', async () => {
    const response = await quote({ 'grpc-timeout': '800m' });
    expect(response.status).toBe(200);
    expect(lastSeen().budget).toBeGreaterThan(0);
    expect(lastSeen().budget).toBeLessThanOrEqual(800);
  });

  it("sends what is left of the tighter deadline: A's attempt timeout (2 s) under a long budget, or with none", async () => {
    await quote({ [REQUEST_DEADLINE_HEADER]: '60000' }).expect(200);
    expect(lastSeen().budget).toBeLessThanOrEqual(2_000);
    await quote().expect(200);
    expect(lastSeen().budget).toBeGreaterThan(0);
    expect(lastSeen().budget).toBeLessThanOrEqual(2_000);
  });

  it('answers 504 when the deadline passes while the handler works (its signal aborts)', async () => {
    const response = await request(services.a.getHttpServer()).get('/slow').set(REQUEST_DEADLINE_HEADER, '50');
    expect(response.status).toBe(504);
    expect(response.body).toEqual(expect.objectContaining({ statusCode: 504, error: 'Gateway Timeout' }));
  });

  it("rejects a spent budget with 504 before A's handler runs (and B never hears of it)", async () => {
    const handled = services.state.handledByA;
    const seen = services.state.seenByB.length;
    const spentBudgets: Record<string, string>[] = [
      { [REQUEST_DEADLINE_HEADER]: '0' },
      { [REQUEST_DEADLINE_HEADER]: '-20' },
      { 'grpc-timeout': '0m' },
    ];
    for (const spent of spentBudgets) {
      const response = await quote(spent);
      expect(response.status).toBe(504);
      expect(response.body).toEqual({
        statusCode: 504,
        error: 'Gateway Timeout',
        message: "The caller's deadline has passed.",
      });
    }
    expect(services.state.handledByA).toBe(handled);
    expect(services.state.seenByB).toHaveLength(seen);
  });

  it("rejects a message whose budget is spent with the DEADLINE_EXCEEDED payload, before B's handler runs", async () => {
    const client = ClientProxyFactory.create({
      transport: Transport.TCP,
      options: { host: '127.0.0.1', port: services.portOfB },
    });
    try {
      const seen = services.state.seenByB.length;
      const reply = await lastValueFrom(client.send('price', { sku: 'B-1', [REQUEST_DEADLINE_HEADER]: 0 })).catch(
        (error: unknown) => error,
      );
      expect(reply).toEqual({
        status: 504,
        error: 'Gateway Timeout',
        message: "The caller's deadline has passed.",
        retryAfter: null,
        code: 'DEADLINE_EXCEEDED',
      });
      expect(services.state.seenByB).toHaveLength(seen);
      // A message with budget left runs, and one without a budget runs with no deadline.
      await expect(
        lastValueFrom(client.send('price', { sku: 'B-2', [REQUEST_DEADLINE_HEADER]: '2S' })),
      ).resolves.toEqual({ sku: 'B-2', price: 42 });
      expect(lastSeen().budget).toBeLessThanOrEqual(2_000);
      await lastValueFrom(client.send('price', { sku: 'B-3' }));
      expect(lastSeen().budget).toBe(Infinity);
    } finally {
      client.close();
    }
  });
});

describe('an RPC client without propagateDeadline', () => {
  it('sends the data as it is: B runs without a deadline', async () => {
    const services = await startTwoServices({ clientOfA: {} });
    try {
      await request(services.a.getHttpServer()).get('/quote').set(REQUEST_DEADLINE_HEADER, '1500').expect(200);
      expect(services.state.seenByB.at(-1)).toEqual(
        expect.objectContaining({ budget: Infinity, data: { sku: 'A-1' } }),
      );
    } finally {
      await services.close();
    }
  });
});

describe('priority shedding across services: x-criticality at A reaches the limiter of B', () => {
  let services: Awaited<ReturnType<typeof startTwoServices>>;

  beforeAll(async () => {
    // B's limited handler: 2 permits, no queue; sheddable calls only while fewer than 1 runs. A's attempt
    // timeout outlasts the test however busy the machine: a held call that timed out at A would be retried
    // and take B's second permit.
    services = await startTwoServices({
      clientOfA: { propagateDeadline: true, pipeline: { attemptTimeout: 60_000, totalTimeout: 60_000 } },
    });
  });

  afterAll(async () => {
    await services.close();
  });

  const limitedQuote = (criticality?: string, hold = false) => {
    const call = request(services.a.getHttpServer()).get(`/limited-quote${hold ? '?hold=true' : ''}`);
    return criticality ? call.set(DEFAULT_CRITICALITY_HEADER, criticality) : call;
  };

  it('sheds a sheddable request while a critical one gets through, and sends the criticality on to B', async () => {
    // One critical call holds a permit of B's limiter: the sheddable share (half of 2) is used up.
    const holding = limitedQuote('critical', true).then((r) => r);
    while (services.state.held.length === 0) await new Promise((resolve) => setImmediate(resolve));
    expect(getCriticality(services.state.seenByB.at(-1)!.context!)).toBe('critical');
    const seen = services.state.seenByB.length;

    const sheddable = await limitedQuote('sheddable');
    expect(sheddable.status).toBe(429);
    expect(sheddable.body).toEqual(expect.objectContaining({ status: 429, error: 'Too Many Requests' }));
    expect(services.state.seenByB).toHaveLength(seen); // B's handler never ran for it

    // A request without a criticality (default) may use the whole limit: it gets through too.
    expect((await limitedQuote()).status).toBe(200);
    const critical = await limitedQuote('critical');
    expect(critical.status).toBe(200);
    expect(critical.body).toEqual({ sku: 'A-2', price: 42 });
    expect(services.state.seenByB).toHaveLength(seen + 2);
    expect(services.state.seenByB.at(-1)!.data).toEqual({ sku: 'A-2', hold: false });

    services.state.releaseHeld();
    expect((await holding).status).toBe(200);
    // With the limiter free again, a sheddable request runs too.
    expect((await limitedQuote('sheddable')).status).toBe(200);
    expect(getCriticality(services.state.seenByB.at(-1)!.context!)).toBe('sheddable');
  });
});
