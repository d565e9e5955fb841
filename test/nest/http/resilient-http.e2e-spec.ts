import 'reflect-metadata';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { Controller, Get, Param, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import type { App } from 'supertest/types.js';
import {
  BrokenCircuitError,
  ResilienceModule,
  ResiliencePipelineRegistry,
  Retry,
  TimeoutRejectedError,
} from '../../../src/index.js';
import {
  getResilientHttpClientToken,
  ResilientHttpClient,
  ResilientHttpModule,
  standardHttpPipeline,
} from '../../../src/nest/http/index.js';
import { FakeTimeProvider } from '../../../src/testing/index.js';
import { driveWithClock } from '../../utils/drive.js';

type Handler = (req: IncomingMessage, res: ServerResponse, hit: number) => void;

/** A real HTTP server on a loopback port whose answers each test scripts. */
class TestServer {
  hits = 0;
  handler: Handler = (_req, res) => res.end('ok');
  readonly server: Server = createServer((req, res) => {
    this.handler(req, res, ++this.hits);
  });
  url = '';

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  reset(handler: Handler): void {
    this.hits = 0;
    this.handler = handler;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) =>
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));

describe('ResilientHttpModule against real HTTP servers', () => {
  // An hour ahead of the wall clock: a date read against the wrong clock is off by an hour, not by a
  // distance that depends on how fast the machine ran the tests before.
  const time = new FakeTimeProvider(Date.now() + 3_600_000);
  let app: INestApplication<App>;
  let client: ResilientHttpClient;
  let strict: ResilientHttpClient;
  let a: TestServer;
  let b: TestServer;
  let refusedUrl: string;

  const drive = <T>(promise: Promise<T>): Promise<T> => driveWithClock(promise, time);

  /** Lets the event loop run until `condition` holds (bounded; no timers). */
  async function until(condition: () => boolean): Promise<void> {
    for (let i = 0; i < 2_000 && !condition(); i++) await new Promise((r) => setImmediate(r));
    expect(condition()).toBe(true);
  }

  @Controller('catalog')
  class CatalogController {
    constructor(private readonly http: ResilientHttpClient) {}

    @Get('slow/:id')
    @Retry({ maxRetryAttempts: 0 })
    async slow(@Param('id') id: string): Promise<unknown> {
      return (await this.http.get(`${a.url}/slow/${id}`)).data;
    }

    @Get(':id')
    async product(@Param('id') id: string): Promise<unknown> {
      return (await this.strictClient().get(`${a.url}/products/${id}`)).data;
    }
    private strictClient(): ResilientHttpClient {
      return strict;
    }
  }

  beforeAll(async () => {
    a = await new TestServer().start();
    b = await new TestServer().start();
    const probe = await new TestServer().start();
    refusedUrl = probe.url;
    await probe.stop();
    const moduleRef = await Test.createTestingModule({
      imports: [
        ResilienceModule.forRoot({ timeProvider: time }),
        ResilientHttpModule.register({
          pipeline: {
            retry: { maxRetryAttempts: 3, delay: 100, useJitter: false, maxDelay: 10_000 },
            circuitBreaker: { kind: 'consecutive', failureThreshold: 6, breakDuration: 30_000 },
            attemptTimeout: 1_000,
            totalTimeout: 5_000,
          },
        }),
        ResilientHttpModule.register({
          name: 'strict',
          failureStatusCodes: [404],
          pipeline: {
            retry: { maxRetryAttempts: 3, delay: 0 },
            circuitBreaker: { kind: 'consecutive', failureThreshold: 4, breakDuration: 30_000 },
          },
        }),
      ],
      controllers: [CatalogController],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.listen(0, '127.0.0.1');
    client = app.get(ResilientHttpClient);
    strict = app.get(getResilientHttpClientToken('strict'));
  });

  afterAll(async () => {
    await app.close();
    await Promise.all([a.stop(), b.stop()]);
  });

  afterEach(async () => {
    a.reset((_req, res) => res.end('ok'));
    b.reset((_req, res) => res.end('ok'));
    // Each test starts with closed circuits: every instance of the pipelines is driven by its control.
    const registry = app.get(ResiliencePipelineRegistry);
    await registry.circuitControl('http:default').close();
    await registry.circuitControl('http:strict').close();
  });

  it('retries a 503 and returns the 200 that follows', async () => {
    a.reset((_req, res, hit) => (hit === 1 ? json(res, 503, { error: 'busy' }) : json(res, 200, { ok: true })));
    const response = client.get(`${a.url}/r`);
    await until(() => a.hits === 1);
    await time.advanceAsync(100);
    await expect(response).resolves.toMatchObject({ status: 200, data: { ok: true } });
    expect(a.hits).toBe(2);
  });

  it('honours Retry-After in seconds on 429', async () => {
    a.reset((_req, res, hit) =>
      hit === 1 ? json(res, 429, {}, { 'retry-after': '3' }) : json(res, 200, { ok: true }),
    );
    const response = client.get(`${a.url}/r`);
    await until(() => a.hits === 1);
    await time.advanceAsync(2_999);
    expect(a.hits).toBe(1);
    await time.advanceAsync(1);
    await until(() => a.hits === 2);
    await expect(response).resolves.toMatchObject({ status: 200 });
  });

  it('honours Retry-After as an HTTP date on 503, read against the registry clock', async () => {
    // An HTTP date has whole seconds: on the fake clock's next whole second it names exactly 2 s from now.
    const second = Math.ceil((time.now() + 1) / 1_000) * 1_000;
    await time.advanceAsync(second - time.now());
    a.reset((_req, res, hit) =>
      hit === 1
        ? json(res, 503, {}, { 'retry-after': new Date(time.now() + 2_000).toUTCString() })
        : json(res, 200, { ok: true }),
    );
    const response = client.get(`${a.url}/r`);
    await until(() => a.hits === 1);
    await until(() => time.pendingDelays.includes(2_000)); // the retry waits exactly what the date names
    await time.advanceAsync(1_999);
    expect(a.hits).toBe(1);
    await time.advanceAsync(1);
    await until(() => a.hits === 2);
    await expect(response).resolves.toMatchObject({ status: 200 });
  });

  it('fails at once, with the retry-after exposed, when the wait would pass the total timeout', async () => {
    a.reset((_req, res) => json(res, 429, {}, { 'retry-after': '60' }));
    const error = (await client.get(`${a.url}/r`).catch((e: unknown) => e)) as {
      response?: { status: number };
      retryAfter?: number;
    };
    expect(error.response?.status).toBe(429);
    expect(error.retryAfter).toBe(60_000);
    expect(a.hits).toBe(1);
  });

  it('does not retry other 4xx', async () => {
    a.reset((_req, res) => json(res, 404, {}));
    await expect(client.get(`${a.url}/missing`)).rejects.toMatchObject({ response: { status: 404 } });
    expect(a.hits).toBe(1);
  });

  it('times out a hanging server per attempt and in total, closing the sockets', async () => {
    const hanging: IncomingMessage[] = [];
    a.reset((req) => void hanging.push(req)); // never answers
    const error = await drive(client.get(`${a.url}/hang`).catch((e: unknown) => e));
    expect(error).toBeInstanceOf(TimeoutRejectedError);
    expect(a.hits).toBe(4); // attempt timeouts of 1 s and 100 ms delays fit 4 attempts in the 5 s total
    await until(() => hanging.every((req) => req.socket.destroyed));
  });

  it('retries a refused connection', async () => {
    const error = (await drive(client.get(`${refusedUrl}/x`).catch((e: unknown) => e))) as { code?: string };
    expect(error.code).toBe('ECONNREFUSED');
  });

  it('does not retry a POST unless it is marked idempotent or carries an Idempotency-Key', async () => {
    a.reset((_req, res) => json(res, 503, {}));
    await expect(client.post(`${a.url}/orders`, { item: 1 })).rejects.toMatchObject({ response: { status: 503 } });
    expect(a.hits).toBe(1);

    a.reset((_req, res, hit) => (hit === 1 ? json(res, 503, {}) : json(res, 201, { created: true })));
    const keyed = client.post(`${a.url}/orders`, { item: 1 }, { headers: { 'Idempotency-Key': 'k-1' } });
    await until(() => a.hits === 1);
    await time.advanceAsync(100);
    await expect(keyed).resolves.toMatchObject({ status: 201 });

    a.reset((req, res, hit) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => (hit === 1 ? json(res, 503, {}) : json(res, 200, { echoed: JSON.parse(body) })));
    });
    const marked = client.post(`${a.url}/orders`, { item: 2 }, { idempotent: true });
    await until(() => a.hits === 1);
    await time.advanceAsync(100);
    await expect(marked).resolves.toMatchObject({ data: { echoed: { item: 2 } } }); // a fresh copy each attempt
  });

  it('keeps one circuit per authority: a failing host does not open the circuit of another', async () => {
    a.reset((_req, res) => json(res, 500, {}));
    await drive(client.get(`${a.url}/x`).catch(() => undefined)); // 4 failures
    await drive(client.get(`${a.url}/x`).catch(() => undefined)); // 2 more open a's circuit
    expect(a.hits).toBe(6);
    await expect(client.get(`${a.url}/x`)).rejects.toBeInstanceOf(BrokenCircuitError);
    expect(a.hits).toBe(6);
    await expect(client.get(`${b.url}/y`)).resolves.toMatchObject({ status: 200 });
  });

  it("the seeds' scenario: a missing URL is retried, the circuit opens, and the Nest route answers 503 fast", async () => {
    a.reset((_req, res) => json(res, 404, { error: 'not found' }));
    await request(app.getHttpServer()).get('/catalog/42').expect(500); // 4 calls (404 counts as failure here)
    expect(a.hits).toBe(4);
    const res = await request(app.getHttpServer()).get('/catalog/42').expect(503);
    expect(res.headers['retry-after']).toBe('30');
    expect(a.hits).toBe(4);
  });

  it('validates the standard pipeline: attempt timeout <= total timeout, sampling >= 2 × attempt timeout', () => {
    expect(() => standardHttpPipeline({ attemptTimeout: 40_000, totalTimeout: 30_000 })).toThrow(
      /attemptTimeout: 40000 must be <= totalTimeout \(30000\)[\s\S]*samplingDuration: 30000 must be >= 2 × attemptTimeout \(80000\)/,
    );
  });

  it('cancels the upstream request when the Nest client disconnects', async () => {
    const hanging: IncomingMessage[] = [];
    a.reset((req) => void hanging.push(req));
    const nestClient = httpRequest(`${(await app.getUrl()).replace('[::1]', '127.0.0.1')}/catalog/slow/1`);
    nestClient.on('error', () => undefined);
    nestClient.end();
    await until(() => hanging.length === 1);
    expect(hanging[0].socket.destroyed).toBe(false);
    nestClient.destroy();
    await until(() => hanging[0].socket.destroyed);
  });

  it('offers the Observable form', async () => {
    const { lastValueFrom } = await import('rxjs');
    await expect(lastValueFrom(client.get$(`${b.url}/z`))).resolves.toMatchObject({ status: 200, data: 'ok' });
  });
});
