import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Controller, Get, Injectable, UseInterceptors, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import type { App } from 'supertest/types.js';
import {
  CircuitBreaker,
  Fallback,
  ResilienceInterceptor,
  ResilienceModule,
  ResiliencePipelineRegistry,
  Retry,
  UseResiliencePipeline,
} from '../../src/index.js';
import { RecordingListener } from '../utils/recording.listener.js';

@Injectable()
class PaymentsService {
  refundFails = true;

  @CircuitBreaker('payments')
  charge(): Promise<string> {
    return Promise.resolve('charged');
  }

  @CircuitBreaker('payments')
  refund(): Promise<string> {
    return this.refundFails ? Promise.reject(new Error('refund failed')) : Promise.resolve('refunded');
  }
}

/** Counts attempts; every attempt fails until `failures` is 0. */
@Injectable()
class QuoteService {
  attempts = 0;

  @Retry('quotes')
  sectionQuote(): Promise<string> {
    this.attempts++;
    return Promise.reject(new Error('no quote'));
  }

  @UseResiliencePipeline('quotes')
  wholeQuote(): Promise<string> {
    this.attempts++;
    return Promise.reject(new Error('no quote'));
  }

  @UseResiliencePipeline('quotes')
  freeQuote(): Promise<string> {
    return Promise.resolve('free');
  }

  @Fallback({ value: 'cached' })
  @UseResiliencePipeline('quotes')
  cachedQuote(): Promise<string> {
    return Promise.reject(new Error('no quote'));
  }
}

@Controller('quotes')
@UseResiliencePipeline('quotes')
@UseInterceptors(ResilienceInterceptor)
class QuoteController {
  attempts = 0;

  @Get()
  quote(): Promise<string> {
    this.attempts++;
    return Promise.reject(new Error('no quote'));
  }
}

@Controller('payments')
class PaymentsController {
  constructor(private readonly payments: PaymentsService) {}

  @Get('charge')
  charge(): Promise<string> {
    return this.payments.charge();
  }
}

describe('a named pipeline has one identity, whichever method uses it', () => {
  let app: INestApplication<App>;
  let registry: ResiliencePipelineRegistry;
  let payments: PaymentsService;
  let quotes: QuoteService;
  const listener = new RecordingListener();

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        ResilienceModule.forRoot({
          telemetryListeners: [listener],
          logging: false,
          pipelines: {
            payments: { circuitBreaker: { kind: 'consecutive', failureThreshold: 2, breakDuration: '1m' } },
            quotes: { retry: { maxRetryAttempts: 1, delay: 0 } },
          },
        }),
      ],
      providers: [PaymentsService, QuoteService],
      controllers: [QuoteController, PaymentsController],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    registry = app.get(ResiliencePipelineRegistry);
    payments = app.get(PaymentsService);
    quotes = app.get(QuoteService);
  });

  afterAll(() => app.close());

  it('lists, queries, reports and names the shared circuit under the pipeline name', async () => {
    await expect(payments.refund()).rejects.toThrow('refund failed');
    await expect(payments.refund()).rejects.toThrow('refund failed');

    const circuits = await registry.circuits();
    expect(circuits.filter((c) => c.state === 'open').map((c) => c.pipelineName)).toEqual(['payments']);
    expect(circuits.map((c) => c.pipelineName)).not.toContain('PaymentsService.charge');
    expect(circuits.map((c) => c.pipelineName)).not.toContain('PaymentsService.refund');
    expect((await registry.circuitState('payments'))?.state).toBe('open');

    const res = await request(app.getHttpServer()).get('/payments/charge').expect(503);
    expect(res.body.message).toBe('The circuit of "payments" is open.');

    const breaker = listener.events.filter((e) => e.source.strategyType === 'circuit-breaker');
    expect(new Set(breaker.map((e) => e.source.pipelineName))).toEqual(new Set(['payments']));
    expect(new Set(breaker.map((e) => e.context.operationKey))).toEqual(
      new Set(['PaymentsService.refund', 'PaymentsService.charge']),
    );
  });

  it("@UseResiliencePipeline alone runs the named pipeline itself: its calls are the pipeline's, the method their operation key", async () => {
    const executed = () =>
      listener.events
        .filter((e) => e.eventName === 'PipelineExecuted')
        .map((e) => `${e.source.pipelineName} ${e.context.operationKey} ${e.severity}`);
    listener.events.length = 0;
    await expect(quotes.freeQuote()).resolves.toBe('free');
    expect(executed()).toEqual(['quotes QuoteService.freeQuote information']);
    expect(registry.knownPipelineNames).not.toContain('QuoteService.freeQuote');

    // With a strategy of its own the method is a pipeline of its own, which runs the named one inside:
    // each reports its own execution under its own name.
    listener.events.length = 0;
    await expect(quotes.cachedQuote()).resolves.toBe('cached');
    expect(executed()).toEqual([
      'quotes QuoteService.cachedQuote error',
      'QuoteService.cachedQuote QuoteService.cachedQuote information',
    ]);
    expect(registry.knownPipelineNames).toContain('QuoteService.cachedQuote');
  });

  it('reload reaches section decorators, @UseResiliencePipeline and the interceptor', async () => {
    const controller = app.get(QuoteController);
    const attemptsOf = async (run: () => Promise<unknown>, read: () => number): Promise<number> => {
      const before = read();
      await run().catch(() => undefined);
      return read() - before;
    };
    const section = () =>
      attemptsOf(
        () => quotes.sectionQuote(),
        () => quotes.attempts,
      );
    const whole = () =>
      attemptsOf(
        () => quotes.wholeQuote(),
        () => quotes.attempts,
      );
    const routed = () =>
      attemptsOf(
        () => request(app.getHttpServer()).get('/quotes'),
        () => controller.attempts,
      );

    expect([await section(), await whole(), await routed()]).toEqual([2, 2, 2]);
    await registry.reload('quotes', { retry: { maxRetryAttempts: 3, delay: 0 } });
    expect([await section(), await whole(), await routed()]).toEqual([4, 4, 4]);
  });
});
