import { describe, expect, it } from '@jest/globals';
import { ResiliencePipelineBuilder, ResilienceValidationError } from '../../../src/core.entry.js';
import { FakeTimeProvider } from '../../../src/testing/index.js';
import { deferred } from '../../utils/flaky.js';

const down = new Error('down');

describe('hedging delay', () => {
  it('takes any negative value as fallback mode: the next attempt starts only after a failure', async () => {
    const time = new FakeTimeProvider();
    const pipeline = new ResiliencePipelineBuilder<string>({ timeProvider: time })
      .addHedging({ maxHedgedAttempts: 1, delay: -5_000 })
      .build();
    const primary = deferred<string>();
    const started: number[] = [];
    const result = pipeline.execute(({ attemptNumber }) => {
      started.push(attemptNumber);
      return attemptNumber === 0 ? primary.promise : 'hedge';
    });
    await time.advanceAsync(60_000);
    expect(started).toEqual([0]); // no timer starts a hedge in fallback mode
    primary.reject(down);
    await expect(result).resolves.toBe('hedge');
    expect(started).toEqual([0, 1]);
  });

  it('rejects a delay that is not a finite number up to the largest timer delay', () => {
    let error: unknown;
    try {
      new ResiliencePipelineBuilder()
        .addHedging({ delay: -Infinity })
        .addHedging({ delay: Number.NaN })
        .addHedging({ delay: 2 ** 31 })
        .build();
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ResilienceValidationError);
    expect((error as ResilienceValidationError).issues.map((i) => i.path)).toEqual([
      'strategies[0] (hedging).delay',
      'strategies[1] (hedging).delay',
      'strategies[2] (hedging).delay',
    ]);
  });
});
