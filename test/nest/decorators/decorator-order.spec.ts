import { describe, expect, it } from '@jest/globals';
import { STRATEGY_CATALOG, STRATEGY_SECTIONS } from '../../../src/core.entry.js';
import { AttemptTimeout, RESILIENCE_DECORATOR_ORDER, Timeout } from '../../../src/nest/index.js';

describe('the decorators follow the one composition order', () => {
  it('is the order of the catalog lines that have a decorator, with the nested pipeline slotted in', () => {
    const decorated = STRATEGY_CATALOG.filter((line) => line.decorator);
    expect(decorated.map((line) => line.name)).toEqual([
      'fallback',
      'pipeline',
      'rateLimiter',
      'concurrencyLimiter',
      'adaptiveConcurrency',
      'hedging',
      'retry',
      'adaptiveThrottling',
      'circuitBreaker',
      'timeout',
    ]);
    expect(decorated.map((line) => `@${line.decorator}`)).toEqual([
      '@Fallback',
      '@UseResiliencePipeline',
      '@RateLimit',
      '@ConcurrencyLimit',
      '@AdaptiveConcurrencyLimit',
      '@Hedging',
      '@Retry',
      '@AdaptiveThrottling',
      '@CircuitBreaker',
      '@AttemptTimeout',
    ]);
    // The deprecated names of the same order.
    expect(RESILIENCE_DECORATOR_ORDER).toEqual(decorated.map((line) => line.name));
    expect(STRATEGY_SECTIONS).toBe(STRATEGY_CATALOG);
  });

  it('keeps @Timeout as the deprecated name of @AttemptTimeout', () => {
    expect(Timeout).toBe(AttemptTimeout);
  });
});
