// #region testing-a-nest-app
import 'reflect-metadata';
import { expect, it } from '@jest/globals';
import { Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import {
  CIRCUIT_BREAKER_STATE_STORE,
  CircuitBreaker,
  InMemoryCircuitBreakerStateStore,
  RESILIENCE_TIME_PROVIDER,
  ResilienceModule,
  Retry,
} from '../../src/index.js';
import { FakeTimeProvider } from '../../src/testing/index.js';

@Injectable()
export class QuoteService {
  calls = 0;

  @Retry({ maxRetryAttempts: 2, delay: 1_000, backoffType: 'constant', useJitter: false })
  @CircuitBreaker('quotes')
  async latest(): Promise<string> {
    if (++this.calls < 3) throw new Error('quote service down');
    return 'EUR/USD 1.09';
  }
}

@Module({
  imports: [
    ResilienceModule.forRoot({
      pipelines: { quotes: { circuitBreaker: { kind: 'consecutive', failureThreshold: 5 } } },
    }),
  ],
  providers: [QuoteService],
})
export class QuotesModule {}

it('retries on the fake clock, with circuit state in a store the test holds', async () => {
  const time = new FakeTimeProvider();
  const store = new InMemoryCircuitBreakerStateStore();
  const moduleRef = await Test.createTestingModule({ imports: [QuotesModule] })
    .overrideProvider(RESILIENCE_TIME_PROVIDER)
    .useValue(time)
    .overrideProvider(CIRCUIT_BREAKER_STATE_STORE)
    .useValue(store)
    .compile();
  await moduleRef.init(); // decorators take effect when the module initialises, like every Nest lifecycle hook

  const quotes = moduleRef.get(QuoteService);
  const result = quotes.latest();
  await time.advanceAsync(2_000); // both retry delays pass at once, no real waiting
  await expect(result).resolves.toBe('EUR/USD 1.09');
  expect(quotes.calls).toBe(3);
  expect([...store.keys()]).toEqual(['quotes/circuit-breaker']); // the "quotes" circuit lives in the test's store

  await moduleRef.close();
});
// #endregion testing-a-nest-app
