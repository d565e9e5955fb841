import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import { Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import {
  Fallback,
  ResilienceModule,
  ResiliencePipelineRegistry,
  ResilienceValidationError,
  Retry,
  UseResiliencePipeline,
} from '../../src/index.js';

async function startError(imports: unknown[], providers: unknown[]): Promise<ResilienceValidationError> {
  let moduleRef;
  try {
    moduleRef = await Test.createTestingModule({
      imports: imports as never[],
      providers: providers as never[],
    }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    await app.close();
  } catch (error) {
    await moduleRef?.close();
    if (error instanceof ResilienceValidationError) return error;
    throw error;
  }
  throw new Error('the application started');
}

describe('one start-up error for every pipeline and decorator', () => {
  it('collects bad pipeline options and bad decorators into one error, in one format, with did-you-mean', async () => {
    @Injectable()
    class Orders {
      @Fallback('cachedOrdrs')
      @Retry('orders')
      async list(): Promise<string[]> {
        return [];
      }

      cachedOrders(error: unknown): string[] {
        return [String(error)];
      }

      @UseResiliencePipeline('invetory')
      async stock(): Promise<number> {
        return 1;
      }
    }

    @Module({ imports: [ResilienceModule.forFeature({ inventory: { timeout: -5 } })] })
    class InventoryModule {}

    const error = await startError(
      [
        ResilienceModule.forRoot({
          pipelines: {
            orders: { retry: { maxRetryAttempts: 2, shouldHandle: 'transiant-network', dealy: 10 } as never },
          },
        }),
        InventoryModule,
      ],
      [Orders],
    );
    expect(error.message.split('\n')[0]).toBe('Invalid resilience configuration (5 problems):');
    expect(error.issues.map((i) => `${i.path}: ${JSON.stringify(i.value)} ${i.rule}`)).toEqual([
      expect.stringMatching(
        /^pipelines\.orders\.retry\.shouldHandle: "transiant-network" is not a registered predicate \(did you mean "transient-network"\?; known: .*\)$/,
      ),
      'pipelines.orders.retry.dealy: 10 is not a known option (did you mean "delay"?)',
      'pipelines.inventory.timeout.timeout: -5 must be a number > 0 and <= 2147483647',
      'Orders.list.@Fallback: "cachedOrdrs" is not a method of Orders (did you mean "cachedOrders"?)',
      'Orders.stock.@UseResiliencePipeline: "invetory" is not a registered pipeline (did you mean "inventory"?; known: inventory, orders)',
    ]);
  });

  it('does not report a decorator twice for naming a pipeline that is itself invalid', async () => {
    @Injectable()
    class Payments {
      @Retry('payments')
      async pay(): Promise<string> {
        return 'paid';
      }
    }
    const error = await startError(
      [ResilienceModule.forRoot({ pipelines: { payments: { retry: { maxRetryAttempts: -1 } } } })],
      [Payments],
    );
    expect(error.issues.map((i) => i.path)).toEqual(['pipelines.payments.retry.maxRetryAttempts']);
  });

  it('does not hand out an invalid pipeline before the start: asking for it throws its problems', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [ResilienceModule.forRoot({ pipelines: { ok: { timeout: 100 }, broken: { timeout: -1 } } })],
    }).compile();
    const registry = moduleRef.get(ResiliencePipelineRegistry);
    expect(registry.getPipeline('ok')).toBeDefined();
    expect(() => registry.getPipeline('broken')).toThrow(ResilienceValidationError);
    expect(() => registry.getPipeline('broken')).toThrow('pipelines.broken.timeout.timeout: -1 must be a number');
    await expect(moduleRef.init()).rejects.toThrow('Invalid resilience configuration (1 problem)');
    await moduleRef.close();
  });

  it('names no near miss when nothing is close', async () => {
    @Injectable()
    class Far {
      @Fallback('zzz')
      async go(): Promise<string> {
        return 'go';
      }
    }
    const error = await startError([ResilienceModule.forRoot({})], [Far]);
    expect(error.issues.map((i) => i.rule)).toEqual(['is not a method of Far']);
  });
});
