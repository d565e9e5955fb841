import {
  Controller,
  Get,
  HttpException,
  Inject,
  Injectable,
  Module,
  Query,
  UseInterceptors,
  type INestApplication,
  type INestMicroservice,
  type NestInterceptor,
  type Type,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { MessagePattern, Transport } from '@nestjs/microservices';
import { firstValueFrom } from 'rxjs';
import { ResiliencePipelineRegistry, type ResilienceContext } from '../../../src/index.js';
import {
  ConcurrencyLimit,
  currentResilienceContext,
  RequestDeadlineInterceptor,
  ResilienceModule,
} from '../../../src/nest/index.js';
import {
  InjectResilientClient,
  ResilientClientProxy,
  ResilientClientsModule,
  type ResilientClientOptions,
} from '../../../src/nest/microservices/index.js';
import { freePort } from '../../microservices/rpc-transports.js';

/** What service B's handler saw of one message. */
export interface SeenByB {
  /** Milliseconds left before the handler's deadline when it started; Infinity without one. */
  readonly budget: number;
  /** The data the handler received. */
  readonly data: unknown;
  /** The handler's resilience context (its properties carry whatever else the caller propagated). */
  readonly context: ResilienceContext | undefined;
}

/** What both services record. */
export class TwoServicesState {
  readonly seenByB: SeenByB[] = [];
  handledByA = 0;
  /** Releases the messages B's limited handler holds (those sent with `hold`), in arrival order. */
  readonly held: (() => void)[] = [];

  /** Lets every held message finish. */
  releaseHeld(): void {
    for (const release of this.held.splice(0)) release();
  }
}

const STATE = Symbol('TwoServicesState');

/**
 * How the two services are put together. The interceptors run on every handler of a service, in this
 * order (the deadline's first by default); another request property propagated across services (a
 * criticality, say) joins by adding its interceptor here and reading `SeenByB.context`.
 */
export interface TwoServicesOptions {
  /** Service A's interceptors (HTTP). Default: `RequestDeadlineInterceptor`. */
  readonly interceptorsOfA?: readonly Type<NestInterceptor>[];
  /** Service B's interceptors (RPC). Default: `RequestDeadlineInterceptor`. */
  readonly interceptorsOfB?: readonly Type<NestInterceptor>[];
  /** Options of A's resilient client to B. Default: the standard pipeline, the deadline propagated. */
  readonly clientOfA?: ResilientClientOptions;
  /**
   * The fixed concurrency limit of B's `limited-price` handler (`GET /limited-quote` at A). Default: 2
   * permits, no queue, `sheddable` calls only below half of it.
   */
  readonly limitOfB?: { readonly permitLimit: number; readonly sheddableRatio: number };
}

/** Service B: one RPC handler that records what it saw. */
function serviceB(
  state: TwoServicesState,
  interceptors: readonly Type<NestInterceptor>[],
  limit: { readonly permitLimit: number; readonly sheddableRatio: number },
) {
  @Controller()
  @UseInterceptors(...interceptors)
  class PricesController {
    constructor(
      @Inject(STATE) private readonly seen: TwoServicesState,
      @Inject(ResiliencePipelineRegistry) private readonly registry: ResiliencePipelineRegistry,
    ) {}

    @MessagePattern('price')
    price(data: { sku: string }): { sku: string; price: number } {
      const context = currentResilienceContext();
      const budget = (context?.deadline ?? Infinity) - this.registry.timeProvider.now();
      this.seen.seenByB.push({ budget, data: { ...data }, context });
      return { sku: data.sku, price: 42 };
    }

    /** The same, behind a concurrency limiter; a message with `hold` keeps its permit until released. */
    @MessagePattern('limited-price')
    @ConcurrencyLimit({ permitLimit: limit.permitLimit, queueLimit: 0, sheddableRatio: limit.sheddableRatio })
    async limitedPrice(data: { sku: string; hold?: boolean }): Promise<{ sku: string; price: number }> {
      const answer = this.price(data);
      if (data.hold) await new Promise<void>((release) => this.seen.held.push(release));
      return answer;
    }
  }

  @Module({
    imports: [ResilienceModule.forRoot({ asyncContextPropagation: true })],
    controllers: [PricesController],
    providers: [{ provide: STATE, useValue: state }],
  })
  class ServiceB {}
  return ServiceB;
}

/** Service A: an HTTP handler that asks B for a price through a resilient RPC client. */
function serviceA(
  state: TwoServicesState,
  portOfB: number,
  interceptors: readonly Type<NestInterceptor>[],
  clientOfA: ResilientClientOptions,
) {
  @Injectable()
  class Pricing {
    constructor(@InjectResilientClient('prices') private readonly prices: ResilientClientProxy) {}

    quote(sku: string): Promise<{ sku: string; price: number }> {
      return firstValueFrom(this.prices.send<{ sku: string; price: number }>('price', { sku }));
    }

    limitedQuote(sku: string, hold: boolean): Promise<{ sku: string; price: number }> {
      return firstValueFrom(this.prices.send<{ sku: string; price: number }>('limited-price', { sku, hold }));
    }
  }

  @Controller()
  @UseInterceptors(...interceptors)
  class QuotesController {
    constructor(
      @Inject(STATE) private readonly seen: TwoServicesState,
      @Inject(Pricing) private readonly pricing: Pricing,
    ) {}

    @Get('quote')
    async quote(): Promise<{ sku: string; price: number }> {
      this.seen.handledByA++;
      await Promise.resolve(); // the call to B is made after an await: the context follows (asyncContextPropagation)
      return this.pricing.quote('A-1');
    }

    /** Answers B's refusal (a `ResilienceRpcError` payload) with its status and payload. */
    @Get('limited-quote')
    async limitedQuote(@Query('hold') hold?: string): Promise<{ sku: string; price: number }> {
      await Promise.resolve();
      return this.pricing.limitedQuote('A-2', hold === 'true').catch((error: { status?: unknown }) => {
        throw new HttpException(error, typeof error.status === 'number' ? error.status : 500);
      });
    }

    /** Works until its signal aborts (the deadline passing). */
    @Get('slow')
    async slow(): Promise<never> {
      const signal = currentResilienceContext()!.signal;
      return new Promise<never>((_, reject) => signal.addEventListener('abort', () => reject(signal.reason as Error)));
    }
  }

  @Module({
    imports: [
      ResilienceModule.forRoot({ asyncContextPropagation: true }),
      ResilientClientsModule.register({
        clients: { prices: { ...clientOfA, client: { transport: Transport.TCP, options: { port: portOfB } } } },
      }),
    ],
    controllers: [QuotesController],
    providers: [{ provide: STATE, useValue: state }, Pricing],
  })
  class ServiceA {}
  return ServiceA;
}

/** HTTP → service A → RPC (TCP) → service B, both on loopback; `close()` stops both. */
export async function startTwoServices(options: TwoServicesOptions = {}) {
  const state = new TwoServicesState();
  const portOfB = await freePort();
  const b: INestMicroservice = await NestFactory.createMicroservice(
    serviceB(
      state,
      options.interceptorsOfB ?? [RequestDeadlineInterceptor],
      options.limitOfB ?? { permitLimit: 2, sheddableRatio: 0.5 },
    ),
    { transport: Transport.TCP, options: { host: '127.0.0.1', port: portOfB }, logger: false },
  );
  await b.listen();
  const a: INestApplication = await NestFactory.create(
    serviceA(
      state,
      portOfB,
      options.interceptorsOfA ?? [RequestDeadlineInterceptor],
      options.clientOfA ?? { propagateDeadline: true },
    ),
    { logger: false },
  );
  await a.init();
  return {
    state,
    a,
    portOfB,
    close: async () => {
      state.releaseHeld();
      await a.close();
      await b.close();
    },
  };
}
