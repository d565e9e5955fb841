import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import { Controller, Get, Injectable } from '@nestjs/common';
import { APP_INTERCEPTOR } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import {
  BrokenCircuitError,
  ResilienceInterceptor,
  ResilienceModule,
  ResiliencePipelineBuilder,
  ResiliencePipelineRegistry,
  AttemptTimeout,
  UseResiliencePipeline,
} from '../../../src/index.js';

@Injectable()
class Inventory {
  calls = 0;
  failuresLeft = 0;

  @UseResiliencePipeline('reads')
  async count(sku: string): Promise<string> {
    this.calls++;
    if (this.failuresLeft-- > 0) throw new Error('flaky');
    return `${sku}: 3`;
  }

  @AttemptTimeout(1_000)
  @UseResiliencePipeline('reads')
  async countWithTimeout(sku: string): Promise<string> {
    this.calls++;
    if (this.failuresLeft-- > 0) throw new Error('flaky');
    return `${sku}: 4`;
  }

  @UseResiliencePipeline('breaker')
  async broken(): Promise<string> {
    this.calls++;
    throw new Error('always');
  }
}

const pipelines = {
  reads: { retry: { maxRetryAttempts: 2, delay: 0 } },
  breaker: { circuitBreaker: { kind: 'consecutive' as const, failureThreshold: 1, breakDuration: 60_000 } },
  web: { retry: { maxRetryAttempts: 1, delay: 0 } },
};

describe('@UseResiliencePipeline on a method', () => {
  it('runs the named pipeline around the method, alone or with other decorators', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [ResilienceModule.forRoot({ logging: false, pipelines })],
      providers: [Inventory],
    }).compile();
    await moduleRef.init();
    const inventory = moduleRef.get(Inventory);

    inventory.failuresLeft = 2;
    await expect(inventory.count('sku-1')).resolves.toBe('sku-1: 3');
    expect(inventory.calls).toBe(3);

    inventory.calls = 0;
    inventory.failuresLeft = 2;
    await expect(inventory.countWithTimeout('sku-2')).resolves.toBe('sku-2: 4');
    expect(inventory.calls).toBe(3);

    await expect(inventory.broken()).rejects.toThrow('always');
    await expect(inventory.broken()).rejects.toBeInstanceOf(BrokenCircuitError);
    await moduleRef.close();
  });

  it('nests inside a global interceptor pipeline on the same call', async () => {
    let calls = 0;
    @Controller()
    class Items {
      @Get('items')
      @UseResiliencePipeline('reads')
      items(): string {
        if (++calls < 3) throw new Error('flaky');
        return 'ok';
      }
    }
    const moduleRef = await Test.createTestingModule({
      imports: [ResilienceModule.forRoot({ logging: false, defaultInterceptorPipeline: 'web', pipelines })],
      controllers: [Items],
      providers: [{ provide: APP_INTERCEPTOR, useExisting: ResilienceInterceptor }],
    }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    await app.init();

    await request(app.getHttpServer()).get('/items').expect(200).expect('ok');
    expect(calls).toBe(3);
    await app.close();
  });

  it('follows a reload of the named pipeline', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [ResilienceModule.forRoot({ logging: false, pipelines })],
      providers: [Inventory],
    }).compile();
    await moduleRef.init();
    const inventory = moduleRef.get(Inventory);
    await moduleRef.get(ResiliencePipelineRegistry).reload('reads', { retry: { maxRetryAttempts: 4, delay: 0 } });

    inventory.failuresLeft = 4;
    await expect(inventory.countWithTimeout('sku-3')).resolves.toBe('sku-3: 4');
    expect(inventory.calls).toBe(5);
    await moduleRef.close();
  });
});

describe('ResiliencePipeline.asStrategy', () => {
  it('runs the pipeline as one strategy of another, on the outer call', async () => {
    const inner = new ResiliencePipelineBuilder().addRetry({ maxRetryAttempts: 2, delay: 0 }).build();
    const outer = new ResiliencePipelineBuilder()
      .addTimeout(1_000)
      .addStrategy({ type: 'pipeline', options: {}, create: () => inner.asStrategy() })
      .build();
    const attempts: number[] = [];

    const result = await outer.execute((context) => {
      attempts.push(context.attemptNumber);
      if (attempts.length < 3) throw new Error('flaky');
      return 'done';
    });

    expect(result).toBe('done');
    expect(attempts).toEqual([0, 1, 2]);
    expect(inner.asStrategy()).toBe(inner.asStrategy());
  });
});
