import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import {
  CircuitBreaker,
  ResilienceModule,
  ResiliencePipelineBuilder,
  ResiliencePipelineRegistry,
  ResilienceValidationError,
  Retry,
  type PipelineConfigData,
} from '../../src/index.js';

@Injectable()
class Orders {
  calls = 0;

  @Retry('orders')
  @CircuitBreaker('orders')
  async list(): Promise<string> {
    if (++this.calls < 3) throw new Error('down');
    return 'orders';
  }
}

describe('module configuration from the environment', () => {
  it('gives decorators naming a pipeline the values its strings stand for', async () => {
    // As a loader of environment variables hands them over: every scalar a string. The module's types
    // accept it as it is (PipelineConfigData); the builder's do not.
    const fromEnv: PipelineConfigData = {
      retry: { maxRetryAttempts: '2', delay: '0ms', useJitter: 'false' },
      circuitBreaker: { kind: 'consecutive', failureThreshold: '5', breakDuration: '00:00:30' },
    };
    // @ts-expect-error the builder API stays typed: a duration is a number of milliseconds there
    expect(() => new ResiliencePipelineBuilder().addRetry({ delay: '2s' }).build()).toThrow(ResilienceValidationError);
    const moduleRef = await Test.createTestingModule({
      imports: [ResilienceModule.forRoot({ pipelines: { orders: fromEnv } })],
      providers: [Orders],
    }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    const orders = app.get(Orders);
    await expect(orders.list()).resolves.toBe('orders');
    expect(orders.calls).toBe(3);
    expect(app.get(ResiliencePipelineRegistry).getPipelineConfig('orders')?.retry?.maxRetryAttempts).toBe(2);
    await app.close();
  });
});
