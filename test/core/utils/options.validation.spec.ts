import { describe, expect, it } from '@jest/globals';
import {
  ResiliencePipelineBuilder,
  type FallbackStrategyOptions,
  type RetryStrategyOptions,
} from '../../../src/core.entry.js';

const down = new Error('down');

describe('spread-friendly options: undefined means "not given"', () => {
  it('accepts fallbackAction with fallbackValue: undefined, and the reverse', async () => {
    const given: FallbackStrategyOptions<string> = { fallbackAction: () => 'acted', fallbackValue: undefined };
    const byAction = new ResiliencePipelineBuilder<string>().addFallback(given).build();
    await expect(byAction.execute(() => Promise.reject(down))).resolves.toBe('acted');
    const byValue = new ResiliencePipelineBuilder<string>()
      .addFallback({ fallbackValue: 'value', fallbackAction: undefined })
      .build();
    await expect(byValue.execute(() => Promise.reject(down))).resolves.toBe('value');
  });

  it('treats fallbackValue: undefined alone as missing', () => {
    expect(() => new ResiliencePipelineBuilder().addFallback({ fallbackValue: undefined }).build()).toThrow(
      /fallbackAction: undefined is required \(or give fallbackValue\)/,
    );
  });

  it('does not report an unknown key whose value is undefined (a spread of optional fields)', () => {
    const defaults: RetryStrategyOptions & { legacyDelay?: number } = { maxRetryAttempts: 2, legacyDelay: undefined };
    expect(() =>
      new ResiliencePipelineBuilder()
        .addRetry(defaults as RetryStrategyOptions)
        .addCircuitBreaker({ kind: 'consecutive', failureRatio: undefined, windowSize: undefined })
        .build(),
    ).not.toThrow();
    expect(() => new ResiliencePipelineBuilder().addRetry({ legacyDelay: 5 } as RetryStrategyOptions).build()).toThrow(
      /legacyDelay: 5 is not a known option/,
    );
  });
});
