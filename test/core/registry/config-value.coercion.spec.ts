import { describe, expect, it } from '@jest/globals';
import {
  parseDuration,
  ResiliencePipelineBuilder,
  ResiliencePipelineRegistry,
  ResilienceValidationError,
  TimeoutRejectedError,
  type PipelineConfig,
} from '../../../src/core.entry.js';
import { FakeTimeProvider } from '../../../src/testing/index.js';
import { deferred } from '../../utils/flaky.js';

/** What a YAML or environment loader hands over: every scalar a string. */
function fromEnvironment(config: unknown): PipelineConfig {
  return config as PipelineConfig;
}

function validationIssues(run: () => unknown): { path: string; value: unknown; rule: string }[] {
  try {
    run();
  } catch (error) {
    if (error instanceof ResilienceValidationError) return [...error.issues];
    throw error;
  }
  throw new Error('expected a ResilienceValidationError');
}

describe('durations as human strings', () => {
  it.each([
    ['200ms', 200],
    ['2s', 2_000],
    ['1.5s', 1_500],
    ['1m', 60_000],
    ['1h', 3_600_000],
    ['1d', 86_400_000],
    ['00:00:30', 30_000],
    ['00:01:30.250', 90_250],
    ['1.02:00:00', 93_600_000],
    ['PT30S', 30_000],
    ['PT1M30S', 90_000],
    ['1500', 1_500],
    [' 2s ', 2_000],
    ['-1', -1],
  ])('reads %j as %d ms', (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each(['2 sec', 'soon', '00:61:00', '', 'P', '1e', '2 s 3'])('does not read %j', (text) => {
    expect(parseDuration(text)).toBeUndefined();
  });
});

describe('configuration as data', () => {
  it('reads numbers, durations and booleans given as strings in module configuration', async () => {
    const time = new FakeTimeProvider();
    const registry = new ResiliencePipelineRegistry({
      timeProvider: time,
      pipelines: {
        orders: fromEnvironment({
          retry: { maxRetryAttempts: '2', delay: '200ms', backoffType: 'constant', useJitter: 'false' },
          timeout: '2s',
          circuitBreaker: { kind: 'consecutive', failureThreshold: '10', breakDuration: '00:00:30' },
        }),
        limited: fromEnvironment({
          concurrencyLimiter: '1',
          totalTimeout: '1m',
          hedging: { maxHedgedAttempts: '1', delay: '-1' },
        }),
      },
    });
    const pipeline = registry.getPipeline<string>('orders');
    const attemptsAt: number[] = [];
    const result = pipeline.execute(({ signal }) => {
      attemptsAt.push(time.now());
      return new Promise<string>((_, reject) => signal.addEventListener('abort', () => reject(signal.reason)));
    });
    result.catch(() => undefined);
    for (let i = 0; i < 3; i++) await time.advanceAsync(2_200);
    const error = await result.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TimeoutRejectedError);
    expect((error as TimeoutRejectedError).timeout).toBe(2_000);
    // The original call and two retries, each ending at the 2 s timeout, 200 ms apart.
    const start = attemptsAt[0];
    expect(attemptsAt.map((t) => t - start)).toEqual([0, 2_200, 4_400]);

    const limited = registry.getPipeline<string>('limited');
    const gate = deferred<string>();
    const first = limited.execute(() => gate.promise);
    await expect(limited.execute(() => 'second')).rejects.toMatchObject({ name: 'RateLimiterRejectedError' });
    gate.resolve('first');
    await expect(first).resolves.toBe('first');
    await registry.dispose();
  });

  it('still names path, value and rule for a string that says nothing clear', () => {
    const issues = validationIssues(
      () =>
        new ResiliencePipelineRegistry({
          pipelines: {
            orders: fromEnvironment({
              retry: { maxRetryAttempts: 'two', delay: '2 sec', useJitter: 'yes' },
              timeout: 'soon',
            }),
          },
        }),
    );
    expect(issues).toEqual(
      expect.arrayContaining([
        { path: 'pipelines.orders.retry.maxRetryAttempts', value: 'two', rule: 'must be an integer >= 0' },
        {
          path: 'pipelines.orders.retry.delay',
          value: '2 sec',
          rule: 'must be a duration: milliseconds, or in configuration "200ms", "2s", "1m", "00:00:30"',
        },
        { path: 'pipelines.orders.retry.useJitter', value: 'yes', rule: 'must be a boolean' },
        expect.objectContaining({ path: 'pipelines.orders.timeout.timeout', value: 'soon' }),
      ]),
    );
    expect(issues).toHaveLength(4);
  });

  it('reads "Infinity" for maxRetryAttempts', () => {
    const registry = new ResiliencePipelineRegistry({
      pipelines: { forever: fromEnvironment({ retry: { maxRetryAttempts: 'Infinity' } }) },
    });
    expect(registry.getPipeline('forever')).toBeDefined();
    return registry.dispose();
  });

  it('leaves the user data in a configuration alone', async () => {
    const registry = new ResiliencePipelineRegistry({
      pipelines: { quote: fromEnvironment({ fallback: { fallbackValue: { delay: '2s', price: '10' } } }) },
    });
    await expect(registry.getPipeline('quote').execute(() => Promise.reject(new Error('down')))).resolves.toEqual({
      delay: '2s',
      price: '10',
    });
    await registry.dispose();
  });

  it('keeps the builder API typed: strings are rejected there', () => {
    const issues = validationIssues(() =>
      new ResiliencePipelineBuilder()
        .addRetry({ delay: '2s' as unknown as number, maxRetryAttempts: '2' as never })
        .build(),
    );
    expect(issues.map((i) => `${i.path}=${JSON.stringify(i.value)}`)).toEqual([
      'strategies[0] (retry).maxRetryAttempts="2"',
      'strategies[0] (retry).delay="2s"',
    ]);
  });
});
