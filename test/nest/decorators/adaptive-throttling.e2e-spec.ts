import 'reflect-metadata';
import { describe, expect, it } from '@jest/globals';
import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { isAdaptiveThrottlingRejectedError } from '../../../src/index.js';
import { AdaptiveThrottling, ResilienceModule } from '../../../src/nest/index.js';

const refusal = () => Object.assign(new Error('Service Unavailable'), { status: 503 });

@Injectable()
class Orders {
  calls = 0;

  /** Inline options: a window of this method's own. */
  @AdaptiveThrottling({ k: 1, random: () => 0 })
  place(): Promise<never> {
    this.calls++;
    return Promise.reject(refusal());
  }

  /** The `adaptiveThrottling` section of the configured `orders` pipeline. */
  @AdaptiveThrottling('orders')
  cancel(): Promise<never> {
    this.calls++;
    return Promise.reject(refusal());
  }
}

describe('@AdaptiveThrottling', () => {
  it('throttles a method locally once its dependency refuses, inline or from a configured pipeline', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        ResilienceModule.forRoot({ pipelines: { orders: { adaptiveThrottling: { k: '1', random: () => 0 } } } }),
      ],
      providers: [Orders],
    }).compile();
    await moduleRef.init();
    const orders = moduleRef.get(Orders);
    for (const call of [() => orders.place(), () => orders.cancel()]) {
      const before = orders.calls;
      // The first refusal reaches the method; then requests 1, accepts 0, k 1: p = 1/2, and the draw is 0.
      await expect(call()).rejects.toThrow('Service Unavailable');
      const second = await call().catch((error: unknown) => error);
      expect(isAdaptiveThrottlingRejectedError(second)).toBe(true);
      expect(orders.calls).toBe(before + 1);
    }
    await moduleRef.close();
  });
});
