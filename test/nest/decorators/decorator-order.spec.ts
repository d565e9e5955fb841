import { describe, expect, it } from '@jest/globals';
import { STRATEGY_SECTIONS } from '../../../src/core.entry.js';
import { RESILIENCE_DECORATOR_ORDER } from '../../../src/nest/index.js';

describe('the decorators follow the one composition order', () => {
  it('is the order of decorators, with the nested pipeline slotted in', () => {
    expect(RESILIENCE_DECORATOR_ORDER).toEqual([
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
    expect(STRATEGY_SECTIONS.filter((s) => s.decorator).map((s) => `@${s.decorator}`)).toEqual([
      '@Fallback',
      '@UseResiliencePipeline',
      '@RateLimit',
      '@ConcurrencyLimit',
      '@AdaptiveConcurrencyLimit',
      '@Hedging',
      '@Retry',
      '@AdaptiveThrottling',
      '@CircuitBreaker',
      '@Timeout',
    ]);
  });
});
