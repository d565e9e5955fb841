import { describe, expect, it } from '@jest/globals';
import {
  ResiliencePipelineBuilder,
  ResiliencePipelineRegistry,
  ResilienceValidationError,
} from '../../src/core.entry.js';

/** Every `path: rule` an action's ResilienceValidationError lists. */
function problems(action: () => unknown): string[] {
  try {
    action();
  } catch (error) {
    expect(error).toBeInstanceOf(ResilienceValidationError);
    return (error as ResilienceValidationError).issues.map((i) => `${i.path}: ${i.rule}`);
  }
  throw new Error('no validation error');
}

const build = (add: (b: ResiliencePipelineBuilder) => ResiliencePipelineBuilder) => () =>
  add(new ResiliencePipelineBuilder()).build();

describe('the rule texts of validation problems', () => {
  it.each<[string, () => unknown, string]>([
    [
      'a fallback without an action',
      build((b) => b.addFallback({})),
      'strategies[0] (fallback).fallbackAction: is required (or give fallbackValue)',
    ],
    [
      'a chaos fault without a fault',
      build((b) => b.addChaosFault({})),
      'strategies[0] (chaos-fault).fault: is required (or give faultGenerator)',
    ],
    [
      'a chaos outcome without an outcome',
      build((b) => b.addChaosOutcome({})),
      'strategies[0] (chaos-outcome).outcome: is required (or give outcomeGenerator)',
    ],
    [
      'a mistyped option',
      build((b) => b.addRetry({ maxRetryAtempts: 1 } as never)),
      'strategies[0] (retry).maxRetryAtempts: is not a known option (did you mean "maxRetryAttempts"?)',
    ],
    [
      'an unknown option nothing is close to',
      build((b) => b.addRetry({ zebra: 1 } as never)),
      'strategies[0] (retry).zebra: is not a known option',
    ],
    [
      'a negative attempt count',
      build((b) => b.addRetry({ maxRetryAttempts: -1 })),
      'strategies[0] (retry).maxRetryAttempts: must be an integer >= 0',
    ],
    [
      'a timeout mode that does not exist',
      build((b) => b.addTimeout({ timeout: 1, mode: 'brutal' as never })),
      'strategies[0] (timeout).mode: must be one of "cooperative", "aggressive"',
    ],
    [
      'a clock without now()',
      () => new ResiliencePipelineBuilder({ timeProvider: {} as never }).build(),
      'options.timeProvider: must be a TimeProvider',
    ],
    [
      'maxDelay below delay',
      build((b) => b.addRetry({ delay: 1_000, maxDelay: 10 })),
      'strategies[0] (retry).maxDelay: must be >= delay (1000)',
    ],
    [
      'a fallback value and action together',
      build((b) => b.addFallback({ fallbackValue: 1, fallbackAction: () => 2 })),
      'strategies[0] (fallback).fallbackValue: must not be given together with fallbackAction',
    ],
    [
      'a rate limiter kind and limits together',
      build((b) => b.addRateLimiter({ kind: 'concurrency', permitLimit: 1, limits: [] } as never)),
      'strategies[0] (rate-limiter).limits: cannot be combined with kind',
    ],
    [
      'a limit option of another kind',
      build((b) => b.addRateLimiter({ kind: 'fixed-window', permitLimit: 1, window: 1_000, tokenLimit: 3 } as never)),
      'strategies[0] (rate-limiter).tokenLimit: does not apply to kind "fixed-window"',
    ],
    [
      'a count window that can never open',
      build((b) => b.addCircuitBreaker({ kind: 'count-window', windowSize: 10, minimumThroughput: 20 })),
      'strategies[0] (circuit-breaker).minimumThroughput: must be <= windowSize (10), or the circuit can never open',
    ],
  ])('%s', (_, action, expected) => {
    expect(problems(action)).toContain(expected);
  });

  it('an unknown predicate name lists the known ones, led by a hint for a near miss', () => {
    const registry = (name: string) => () =>
      new ResiliencePipelineRegistry({ pipelines: { a: { retry: { shouldHandle: name } } } });
    expect(problems(registry('timeoutt'))).toContain(
      'pipelines.a.retry.shouldHandle: is not a registered predicate (did you mean "timeout"?; known: all-errors, http-failure, http-retryable, http-transient, overload, timeout, transient-network)',
    );
    expect(problems(registry('zzz'))).toContain(
      'pipelines.a.retry.shouldHandle: is not a registered predicate (known: all-errors, http-failure, http-retryable, http-transient, overload, timeout, transient-network)',
    );
  });
});
