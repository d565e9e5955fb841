import {
  ConstantBackoff,
  TimeoutStrategy as CockatielTimeoutStrategy,
  handleAll,
  retry,
  timeout,
  wrap,
} from 'cockatiel';
import { ResiliencePipelineBuilder } from '../src/index.js';
import type { BenchRun, BenchScenario } from './bench.harness.js';
import { bareCase, plainRetryLoop, value } from './reference.bench.js';

/** A function that fails twice, then succeeds, on every run. */
function failingTwice(run: (fn: () => Promise<number>) => Promise<unknown>): BenchRun {
  let calls = 0;
  const fn = async (): Promise<number> => {
    if (++calls <= 2) throw new Error('transient');
    return 42;
  };
  return () => {
    calls = 0;
    return run(fn);
  };
}

export function coreScenarios(): BenchScenario[] {
  return [
    {
      id: 'retry-success',
      title: 'retry, success',
      cases: [
        bareCase,
        {
          name: 'nest-resilience',
          setup: () => {
            const pipeline = new ResiliencePipelineBuilder().addRetry({ maxRetryAttempts: 3, delay: 0 }).build();
            return () => pipeline.execute(value);
          },
        },
        {
          name: 'cockatiel',
          setup: () => {
            const policy = retry(handleAll, { maxAttempts: 3, backoff: new ConstantBackoff(0) });
            return () => policy.execute(value);
          },
        },
      ],
    },
    {
      id: 'retry-timeout',
      title: 'retry → timeout (cooperative), success',
      cases: [
        bareCase,
        {
          name: 'nest-resilience',
          setup: () => {
            const pipeline = new ResiliencePipelineBuilder().addRetry({ delay: 0 }).addTimeout(10_000).build();
            return () => pipeline.execute(value);
          },
        },
        {
          name: 'cockatiel',
          setup: () => {
            const policy = wrap(
              retry(handleAll, { maxAttempts: 3, backoff: new ConstantBackoff(0) }),
              timeout(10_000, CockatielTimeoutStrategy.Cooperative),
            );
            return () => policy.execute(value);
          },
        },
      ],
    },
    {
      id: 'retry-two-failures',
      title: 'retry, 2 failures then success, zero delay',
      cases: [
        bareCase,
        {
          name: 'plain retry loop (reference)',
          setup: () => failingTwice((fn) => plainRetryLoop(fn, 3)()),
        },
        {
          name: 'nest-resilience',
          setup: () => {
            const pipeline = new ResiliencePipelineBuilder().addRetry({ maxRetryAttempts: 3, delay: 0 }).build();
            return failingTwice((fn) => pipeline.execute(fn));
          },
        },
        {
          name: 'cockatiel',
          setup: () => {
            const policy = retry(handleAll, { maxAttempts: 3, backoff: new ConstantBackoff(0) });
            return failingTwice((fn) => policy.execute(fn));
          },
        },
      ],
    },
  ];
}
