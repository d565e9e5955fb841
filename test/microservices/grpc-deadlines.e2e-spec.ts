import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { fileURLToPath } from 'node:url';
import { Metadata, status as GrpcStatus, type CallOptions, type ServiceError } from '@grpc/grpc-js';
import {
  Controller,
  Inject,
  Injectable,
  Module,
  UseInterceptors,
  type DynamicModule,
  type INestMicroservice,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import {
  ClientProxyFactory,
  GrpcMethod,
  Transport,
  type ClientGrpcProxy,
  type GrpcOptions,
} from '@nestjs/microservices';
import { lastValueFrom, of, toArray, type Observable } from 'rxjs';
import {
  BrokenCircuitError,
  DeadlineExceededError,
  getCriticality,
  IsolatedCircuitError,
  RateLimiterRejectedError,
  ResiliencePipelineRegistry,
  TimeoutRejectedError,
  type Criticality,
} from '../../src/core.entry.js';
import {
  currentResilienceContext,
  RequestDeadlineInterceptor,
  ResilienceModule,
  UseResiliencePipeline,
} from '../../src/nest/index.js';
import { FakeTimeProvider } from '../../src/testing/index.js';
import { freePort } from './rpc-transports.js';

/**
 * `RequestDeadlineInterceptor` on a `@GrpcMethod` handler, behind a real gRPC server (Nest's
 * `Transport.GRPC`, `@grpc/grpc-js`) called by Nest's gRPC client: the call's own deadline (grpc-js
 * sends it as `grpc-timeout`, the server turns it into `call.getDeadline()`), the metadata entries
 * `x-request-deadline-ms` and `x-criticality`, and the status a rejected call ends with.
 *
 * The server's pipelines run on a fake clock, so a budget in the metadata arrives as exactly the number
 * sent; the call's deadline is wall-clock time, so its budget is only bounded from above.
 */

const PROTO = fileURLToPath(new URL('../fixtures/grpc/prices.proto', import.meta.url));
const host = '127.0.0.1';

interface QuoteRequest {
  sku: string;
}

interface QuoteReply {
  sku: string;
  price: number;
}

/** Nest's client of the `prices.Prices` service: each method takes the request, metadata and call options. */
interface PricesClient {
  quote(request: QuoteRequest, metadata?: Metadata, options?: CallOptions): Observable<QuoteReply>;
  watch(request: QuoteRequest, metadata?: Metadata): Observable<QuoteReply>;
  refuse(request: { reason: string }, metadata?: Metadata): Observable<QuoteReply>;
}

/** What one call looked like from inside: the handler's context, and the context of the pipeline it ran. */
interface Seen {
  readonly sku: string;
  /** Milliseconds left before the deadline, per the server's clock; `Infinity` without one. */
  readonly handlerBudget: number;
  readonly handlerCriticality: Criticality | 'no context';
  readonly pipelineBudget: number;
  readonly pipelineCriticality: Criticality;
}

class ServerState {
  /** How many times a handler body ran. */
  handled = 0;
  readonly seen: Seen[] = [];
  /** The `grpc-timeout` entries of the last `Quote` call's metadata, as the handler received it. */
  grpcTimeoutEntries: unknown[] = [];
  /** Set by the handler, completed by the pipeline that runs inside it. */
  pending?: Pick<Seen, 'sku' | 'handlerBudget' | 'handlerCriticality'>;
}

const STATE = Symbol('ServerState');

@Injectable()
class QuoteService {
  constructor(
    @Inject(STATE) private readonly state: ServerState,
    @Inject(ResiliencePipelineRegistry) private readonly registry: ResiliencePipelineRegistry,
  ) {}

  /** Runs in the registry's `quotes` pipeline, which inherits the handler's deadline and criticality. */
  @UseResiliencePipeline('quotes')
  async quote(sku: string): Promise<QuoteReply> {
    const context = currentResilienceContext()!;
    this.state.seen.push({
      ...this.state.pending!,
      pipelineBudget: context.deadline - this.registry.timeProvider.now(),
      pipelineCriticality: getCriticality(context),
    });
    await Promise.resolve();
    return { sku, price: 42 };
  }
}

@Controller()
@UseInterceptors(RequestDeadlineInterceptor)
class PricesController {
  constructor(
    @Inject(STATE) private readonly state: ServerState,
    @Inject(ResiliencePipelineRegistry) private readonly registry: ResiliencePipelineRegistry,
    @Inject(QuoteService) private readonly quotes: QuoteService,
  ) {}

  @GrpcMethod('Prices', 'Quote')
  quote(request: QuoteRequest, metadata: Metadata): Promise<QuoteReply> {
    const context = currentResilienceContext();
    this.state.handled += 1;
    this.state.grpcTimeoutEntries = metadata.get('grpc-timeout');
    this.state.pending = {
      sku: request.sku,
      handlerBudget: context ? context.deadline - this.registry.timeProvider.now() : Infinity,
      handlerCriticality: context ? getCriticality(context) : 'no context',
    };
    return this.quotes.quote(request.sku);
  }

  /** A server-streaming call: two quotes. */
  @GrpcMethod('Prices', 'Watch')
  watch(request: QuoteRequest): Observable<QuoteReply> {
    const context = currentResilienceContext();
    this.state.handled += 1;
    this.state.seen.push({
      sku: request.sku,
      handlerBudget: context ? context.deadline - this.registry.timeProvider.now() : Infinity,
      handlerCriticality: context ? getCriticality(context) : 'no context',
      pipelineBudget: NaN,
      pipelineCriticality: 'default',
    });
    return of({ sku: request.sku, price: 41 }, { sku: request.sku, price: 42 });
  }

  /** Throws the rejection a handler's pipeline would, as the filter receives it. */
  @GrpcMethod('Prices', 'Refuse')
  refuse(request: { reason: string }): never {
    this.state.handled += 1;
    switch (request.reason) {
      case 'open':
        throw new BrokenCircuitError('The circuit "quotes/eu-west" is open.', 2_500);
      case 'isolated':
        throw new IsolatedCircuitError();
      case 'limited':
        throw new RateLimiterRejectedError('Too many quotes.', 1_200);
      case 'slow':
        throw new TimeoutRejectedError(100);
      case 'deadline':
        throw new DeadlineExceededError(800);
      default:
        throw new Error('a plain bug');
    }
  }
}

function pricesModule(state: ServerState): DynamicModule {
  @Module({
    imports: [
      ResilienceModule.forRoot({
        timeProvider: new FakeTimeProvider(),
        asyncContextPropagation: true,
        pipelines: { quotes: { retry: { maxRetryAttempts: 1, delay: 0 } } },
      }),
    ],
    controllers: [PricesController],
    providers: [QuoteService, { provide: STATE, useValue: state }],
  })
  class PricesModule {}
  return { module: PricesModule };
}

function grpcOptions(port: number): GrpcOptions & { transport: Transport.GRPC } {
  return { transport: Transport.GRPC, options: { package: 'prices', protoPath: PROTO, url: `${host}:${port}` } };
}

function metadata(entries: Record<string, string>): Metadata {
  const m = new Metadata();
  for (const [key, value] of Object.entries(entries)) m.set(key, value);
  return m;
}

/** The error a call ended with; fails the test if it succeeded. */
async function failure(call: Observable<unknown>): Promise<ServiceError> {
  const outcome = await lastValueFrom(call).then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  if (!('error' in outcome)) throw new Error(`the call succeeded: ${JSON.stringify(outcome.value)}`);
  return outcome.error as ServiceError;
}

describe('RequestDeadlineInterceptor on a real gRPC server (@grpc/grpc-js)', () => {
  const state = new ServerState();
  let server: INestMicroservice | undefined;
  let client: ClientGrpcProxy | undefined;
  let prices: PricesClient;

  beforeAll(async () => {
    const port = await freePort();
    server = await NestFactory.createMicroservice(pricesModule(state), { ...grpcOptions(port), logger: false });
    await server.listen();
    client = ClientProxyFactory.create(grpcOptions(port));
    prices = client.getService<PricesClient>('Prices');
  }, 60_000);

  afterAll(async () => {
    client?.close();
    await server?.close();
  });

  /** Calls `Quote` and returns what the handler and its pipeline saw. */
  async function quote(sku: string, entries: Record<string, string> = {}, options: CallOptions = {}): Promise<Seen> {
    state.seen.length = 0;
    await expect(lastValueFrom(prices.quote({ sku }, metadata(entries), options))).resolves.toEqual({
      sku,
      price: 42,
    });
    expect(state.seen).toHaveLength(1);
    return state.seen[0];
  }

  describe('the budget', () => {
    it("makes the call's own deadline the handler's: at most what the caller gave, and some left", async () => {
      const seen = await quote('G-1', {}, { deadline: Date.now() + 5_000 });
      expect(seen.handlerBudget).toBeGreaterThan(0);
      expect(seen.handlerBudget).toBeLessThanOrEqual(5_000);
      // The registry's pipeline inside the handler inherits it (same clock: exactly).
      expect(seen.pipelineBudget).toBe(seen.handlerBudget);
      expect(seen.handlerCriticality).toBe('default');
      // grpc-js sent it as grpc-timeout, which the server made the call's deadline and took out of the metadata.
      expect(state.grpcTimeoutEntries).toEqual([]);
    });

    it('runs a call without a deadline and without metadata as it is: no context, no deadline', async () => {
      const seen = await quote('G-2');
      expect(seen).toEqual({
        sku: 'G-2',
        handlerBudget: Infinity,
        handlerCriticality: 'no context',
        pipelineBudget: Infinity,
        pipelineCriticality: 'default',
      });
    });

    it("makes x-request-deadline-ms in the metadata the handler's deadline", async () => {
      expect(await quote('G-3', { 'x-request-deadline-ms': '1500' })).toEqual({
        sku: 'G-3',
        handlerBudget: 1_500,
        handlerCriticality: 'default',
        pipelineBudget: 1_500,
        pipelineCriticality: 'default',
      });
      // gRPC's syntax is read in the metadata too.
      expect((await quote('G-4', { 'x-request-deadline-ms': '2S' })).handlerBudget).toBe(2_000);
    });

    it("takes the smaller of the metadata's budget and the call's deadline", async () => {
      const metadataWins = await quote('G-5', { 'x-request-deadline-ms': '1500' }, { deadline: Date.now() + 5_000 });
      expect(metadataWins.handlerBudget).toBe(1_500);
      expect(metadataWins.pipelineBudget).toBe(1_500);

      const deadlineWins = await quote('G-6', { 'x-request-deadline-ms': '9000' }, { deadline: Date.now() + 3_000 });
      expect(deadlineWins.handlerBudget).toBeGreaterThan(0);
      expect(deadlineWins.handlerBudget).toBeLessThanOrEqual(3_000);
    });
  });

  describe('the criticality', () => {
    it("makes x-criticality in the metadata the handler's criticality, and its pipeline's", async () => {
      expect(await quote('C-1', { 'x-criticality': 'critical' })).toEqual({
        sku: 'C-1',
        handlerBudget: Infinity,
        handlerCriticality: 'critical',
        pipelineBudget: Infinity,
        pipelineCriticality: 'critical',
      });
      expect(await quote('C-2', { 'x-criticality': 'sheddable', 'x-request-deadline-ms': '1200' })).toMatchObject({
        handlerBudget: 1_200,
        handlerCriticality: 'sheddable',
        pipelineCriticality: 'sheddable',
      });
    });
  });

  describe('a spent budget', () => {
    it('is rejected before the handler runs, with the gRPC status DEADLINE_EXCEEDED', async () => {
      state.seen.length = 0;
      const before = state.handled;
      for (const spent of ['0', '-20', '0m']) {
        const error = await failure(prices.quote({ sku: 'S-1' }, metadata({ 'x-request-deadline-ms': spent })));
        expect({ code: error.code, details: error.details }).toEqual({
          code: GrpcStatus.DEADLINE_EXCEEDED,
          details: "The caller's deadline has passed.",
        });
      }
      expect(state.handled).toBe(before);
      expect(state.seen).toEqual([]);
    });

    it('is rejected the same way on a server-streaming call, whose budget left reaches the handler', async () => {
      state.seen.length = 0;
      const before = state.handled;
      const error = await failure(prices.watch({ sku: 'S-2' }, metadata({ 'x-request-deadline-ms': '0' })));
      expect({ code: error.code, details: error.details }).toEqual({
        code: GrpcStatus.DEADLINE_EXCEEDED,
        details: "The caller's deadline has passed.",
      });
      expect(state.handled).toBe(before);

      const replies = prices.watch({ sku: 'S-3' }, metadata({ 'x-request-deadline-ms': '1500' })).pipe(toArray());
      await expect(lastValueFrom(replies)).resolves.toEqual([
        { sku: 'S-3', price: 41 },
        { sku: 'S-3', price: 42 },
      ]);
      expect(state.seen).toMatchObject([{ sku: 'S-3', handlerBudget: 1_500 }]);
    });
  });

  describe("a handler's resilience rejection", () => {
    const refuse = async (reason: string) => {
      const error = await failure(prices.refuse({ reason }, new Metadata()));
      return { code: error.code, details: error.details };
    };

    it('ends the call with the gRPC status of its kind, and the public message', async () => {
      expect(await refuse('deadline')).toEqual({
        code: GrpcStatus.DEADLINE_EXCEEDED,
        details: "The caller's deadline has passed.",
      });
      expect(await refuse('slow')).toEqual({
        code: GrpcStatus.DEADLINE_EXCEEDED,
        details: 'The operation did not answer in time.',
      });
      expect(await refuse('open')).toEqual({ code: GrpcStatus.UNAVAILABLE, details: 'A circuit is open.' });
      expect(await refuse('isolated')).toEqual({ code: GrpcStatus.UNAVAILABLE, details: 'A circuit is isolated.' });
      expect(await refuse('limited')).toEqual({
        code: GrpcStatus.RESOURCE_EXHAUSTED,
        details: 'A rate limit is reached.',
      });
    });

    it('leaves any other error to Nest (UNKNOWN, its generic message)', async () => {
      expect(await refuse('bug')).toEqual({ code: GrpcStatus.UNKNOWN, details: 'Internal server error' });
    });
  });
});
