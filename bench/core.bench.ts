import {
  ConstantBackoff,
  TimeoutStrategy as CockatielTimeoutStrategy,
  handleAll,
  retry,
  timeout,
  wrap,
} from 'cockatiel';
import { ResiliencePipelineBuilder } from '../src/index.js';
import type { BenchCase } from './bench.harness.js';

const value = async (): Promise<number> => 42;

/** A function that fails twice, then succeeds; `reset()` before each measured call. */
function failTwice(): { fn: () => Promise<number>; reset: () => void } {
  let calls = 0;
  return {
    fn: async () => {
      if (++calls <= 2) throw new Error('transient');
      return 42;
    },
    reset: () => {
      calls = 0;
    },
  };
}

export function coreCases(): BenchCase[] {
  const ourRetry = new ResiliencePipelineBuilder().addRetry({ maxRetryAttempts: 3, delay: 0 }).build();
  const cockRetry = retry(handleAll, { maxAttempts: 3, backoff: new ConstantBackoff(0) });

  const ourTimeout = new ResiliencePipelineBuilder().addTimeout(10_000).build();
  const cockTimeout = timeout(10_000, CockatielTimeoutStrategy.Cooperative);

  const ourRetryTimeout = new ResiliencePipelineBuilder().addRetry({ delay: 0 }).addTimeout(10_000).build();
  const cockRetryTimeout = wrap(
    retry(handleAll, { maxAttempts: 3, backoff: new ConstantBackoff(0) }),
    timeout(10_000, CockatielTimeoutStrategy.Cooperative),
  );

  const ours = failTwice();
  const theirs = failTwice();
  const bare = failTwice();

  return [
    { group: 'retry, success', name: 'bare await fn()', run: () => value() },
    { group: 'retry, success', name: 'nest-resilience', run: () => ourRetry.execute(value) },
    { group: 'retry, success', name: 'cockatiel', run: () => cockRetry.execute(value) },

    { group: 'timeout, success', name: 'bare await fn()', run: () => value() },
    { group: 'timeout, success', name: 'nest-resilience', run: () => ourTimeout.execute(value) },
    { group: 'timeout, success', name: 'cockatiel', run: () => cockTimeout.execute(value), iterations: 50_000 },

    { group: 'retry → timeout, success', name: 'bare await fn()', run: () => value() },
    { group: 'retry → timeout, success', name: 'nest-resilience', run: () => ourRetryTimeout.execute(value) },
    {
      group: 'retry → timeout, success',
      name: 'cockatiel',
      run: () => cockRetryTimeout.execute(value),
      iterations: 50_000,
    },

    {
      group: 'retry, 2 failures then success, zero delay',
      name: 'bare await fn()',
      run: async () => {
        bare.reset();
        for (;;) {
          try {
            return await bare.fn();
          } catch {
            // try again
          }
        }
      },
    },
    {
      group: 'retry, 2 failures then success, zero delay',
      name: 'nest-resilience',
      run: () => {
        ours.reset();
        return ourRetry.execute(ours.fn);
      },
      iterations: 50_000,
    },
    {
      group: 'retry, 2 failures then success, zero delay',
      name: 'cockatiel',
      run: () => {
        theirs.reset();
        return cockRetry.execute(theirs.fn);
      },
      iterations: 500,
    },
  ];
}
