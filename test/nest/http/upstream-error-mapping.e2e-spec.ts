import 'reflect-metadata';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { Controller, Get, Param, type INestApplication, type LoggerService } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { isAxiosError } from 'axios';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import type { App } from 'supertest/types.js';
import { ResilienceModule } from '../../../src/index.js';
import { InjectResilientHttpClient, ResilientHttpClient, ResilientHttpModule } from '../../../src/nest/http/index.js';

/*
 * `upstreamErrorMapping`: a request of the client that still fails after its retries, left unhandled in a
 * route, is answered 502 (error answer, failed connection) or 504 (axios' timeout) with one warning line,
 * instead of Nest's 500 with the whole AxiosError; off by default; code that catches still gets the AxiosError.
 */

/** Keeps every line the application logs, by level. */
class LinesLogger implements LoggerService {
  readonly lines: { level: string; text: string }[] = [];
  log(message: unknown): void {
    this.lines.push({ level: 'log', text: String(message) });
  }
  warn(message: unknown): void {
    this.lines.push({ level: 'warn', text: String(message) });
  }
  error(message: unknown, ...rest: unknown[]): void {
    this.lines.push({ level: 'error', text: [message, ...rest].map(String).join('\n') });
  }
  of(...levels: string[]): string[] {
    return this.lines.filter((line) => levels.includes(line.level)).map((line) => line.text);
  }
}

/** A loopback server: `/down` answers 503, `/hang` never answers, anything else 200. */
let hits = 0;
const upstream: Server = createServer((req, res) => {
  hits++;
  if (req.url?.startsWith('/down')) res.writeHead(503).end('unavailable');
  else if (!req.url?.startsWith('/hang')) res.end(JSON.stringify({ price: 1.09 }));
});
let base = '';
let refused = '';

@Controller()
class GatewayController {
  constructor(
    @InjectResilientHttpClient('mapped') private readonly mapped: ResilientHttpClient,
    @InjectResilientHttpClient('plain') private readonly plain: ResilientHttpClient,
  ) {}

  @Get('mapped/:path')
  async viaMapped(@Param('path') path: string): Promise<unknown> {
    return (await this.mapped.get(`${path === 'refused' ? refused : base}/${path}?token=secret`)).data;
  }

  @Get('plain/:path')
  async viaPlain(@Param('path') path: string): Promise<unknown> {
    return (await this.plain.get(`${base}/${path}`)).data;
  }

  @Get('caught/:path')
  async caught(@Param('path') path: string): Promise<unknown> {
    try {
      return (await this.mapped.get(`${base}/${path}`)).data;
    } catch (error) {
      return { isAxiosError: isAxiosError(error), status: isAxiosError(error) ? error.response?.status : undefined };
    }
  }
}

const pipeline = { retry: { maxRetryAttempts: 1, delay: 0 }, attemptTimeout: 5_000, totalTimeout: 10_000 };

describe('ResilientHttpModule upstreamErrorMapping', () => {
  let app: INestApplication<App>;
  const logger = new LinesLogger();
  const host = () => new URL(base).host;

  beforeAll(async () => {
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    refused = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
    await new Promise((resolve) => closed.close(resolve));
    const moduleRef = await Test.createTestingModule({
      imports: [
        ResilienceModule.forRoot({ logging: false }),
        ResilientHttpModule.forFeature([
          { name: 'mapped', upstreamErrorMapping: true, timeout: 200, pipeline },
          { name: 'plain', pipeline },
        ]),
      ],
      controllers: [GatewayController],
    }).compile();
    app = moduleRef.createNestApplication({ logger });
    await app.init();
  });

  afterAll(async () => {
    await app?.close();
    upstream.closeAllConnections();
    await new Promise((resolve) => upstream.close(resolve));
  });

  beforeEach(() => {
    hits = 0;
    logger.lines.length = 0;
  });

  it('answers an error answer after the retries with 502 and one warning line', async () => {
    const response = await request(app.getHttpServer()).get('/mapped/down').expect(502);
    expect(response.body).toEqual({ statusCode: 502, error: 'Bad Gateway', message: 'The upstream service failed.' });
    expect(hits).toBe(2); // retried once first
    expect(logger.of('warn', 'error')).toEqual([`502 Bad Gateway: mapped GET ${host()} answered 503`]);
  });

  it('answers a connection that failed with 502', async () => {
    const response = await request(app.getHttpServer()).get('/mapped/refused').expect(502);
    expect(response.body.error).toBe('Bad Gateway');
    expect(logger.of('warn', 'error')).toEqual([
      `502 Bad Gateway: mapped GET ${new URL(refused).host} could not be reached (ECONNREFUSED)`,
    ]);
  });

  it("answers axios' own timeout with 504", async () => {
    const response = await request(app.getHttpServer()).get('/mapped/hang').expect(504);
    expect(response.body).toEqual({
      statusCode: 504,
      error: 'Gateway Timeout',
      message: 'The upstream service did not answer in time.',
    });
    expect(logger.of('warn', 'error')).toEqual([`504 Gateway Timeout: mapped GET ${host()} timed out (ECONNABORTED)`]);
  });

  it('never logs or answers the URL path or query', async () => {
    const response = await request(app.getHttpServer()).get('/mapped/down').expect(502);
    expect(JSON.stringify(response.body) + logger.of('warn', 'error').join('\n')).not.toMatch(/down|token|secret/);
  });

  it('leaves the AxiosError to code that catches it, and successes as they are', async () => {
    expect((await request(app.getHttpServer()).get('/caught/down').expect(200)).body).toEqual({
      isAxiosError: true,
      status: 503,
    });
    expect((await request(app.getHttpServer()).get('/mapped/quote').expect(200)).body).toEqual({ price: 1.09 });
    expect(logger.of('warn', 'error')).toEqual([]);
  });

  it("is off by default: Nest's 500 with the whole error logged", async () => {
    const response = await request(app.getHttpServer()).get('/plain/down').expect(500);
    expect(response.body).toEqual({ statusCode: 500, message: 'Internal server error' });
    expect(logger.of('warn')).toEqual([]);
    expect(logger.of('error').join('\n')).toMatch(/AxiosError|status code 503/);
  });

  it('is validated at start-up with the other options', async () => {
    const error = await Test.createTestingModule({
      imports: [
        ResilienceModule.forRoot({}),
        ResilientHttpModule.register({ upstreamErrorMapping: 'yes' as unknown as boolean }),
      ],
    })
      .compile()
      .then(
        (moduleRef) => moduleRef.close(),
        (failure: unknown) => failure,
      );
    expect(String(error)).toContain('ResilientHttpModule "default".upstreamErrorMapping: "yes" must be a boolean');
  });
});
