import {
  circuitBreaker,
  ConstantBackoff,
  handleAll,
  retry,
  SamplingBreaker,
  timeout,
  TimeoutStrategy as CockatielTimeoutStrategy,
  wrap,
} from 'cockatiel';
import {
  circuitBreakerStrategy,
  ResiliencePipelineBuilder,
  retryStrategy,
  strategyRegistration,
  timeoutStrategy,
  type ResilienceStrategy,
  type StrategyDefinition,
  type StrategyRegistration,
} from '../src/index.js';
import type { BenchCase, BenchRun, BenchScenario } from './bench.harness.js';
import { bareBatchCase, bareCase, batch, CONCURRENT_CALLS, plainRetryLoop, value } from './reference.bench.js';
import { leanOpossumBreaker, opossumBreaker } from './timeout.bench.js';

const RETRIES = 3;
const TIMEOUT = 10_000;

/** Retry (3, no delay) → time-window breaker (Polly's defaults) → aggressive timeout (10 s). */
function ours(): BenchRun {
  const pipeline = new ResiliencePipelineBuilder()
    .addRetry({ maxRetryAttempts: RETRIES, delay: 0 })
    .addCircuitBreaker()
    .addTimeout({ timeout: TIMEOUT, mode: 'aggressive' })
    .build();
  return () => pipeline.execute(value);
}

/**
 * The same three strategies, each run through its `execute` only: without the inline protocol, which
 * lets neighbouring strategies share one head (one promise hop for the run). What the protocol saves.
 */
function oursExecuteOnly(): BenchRun {
  const executeOnly = <T extends object>(definition: StrategyDefinition<T>, options: T): StrategyRegistration<T> => {
    const registration = strategyRegistration(definition, options);
    return {
      ...registration,
      create: (o, context): ResilienceStrategy<unknown> => {
        const strategy = registration.create(o, context);
        return { execute: (next, ctx) => strategy.execute(next, ctx) };
      },
    };
  };
  const pipeline = new ResiliencePipelineBuilder()
    .addStrategy(executeOnly(retryStrategy, { maxRetryAttempts: RETRIES, delay: 0 }))
    .addStrategy(executeOnly(circuitBreakerStrategy, {}))
    .addStrategy(executeOnly(timeoutStrategy, { timeout: TIMEOUT, mode: 'aggressive' }))
    .build();
  return () => pipeline.execute(value);
}

function cockatiel(): BenchRun {
  const policy = wrap(
    retry(handleAll, { maxAttempts: RETRIES, backoff: new ConstantBackoff(0) }),
    circuitBreaker(handleAll, {
      halfOpenAfter: 5_000,
      breaker: new SamplingBreaker({ threshold: 0.1, duration: 30_000, minimumRps: 1 }),
    }),
    timeout(TIMEOUT, CockatielTimeoutStrategy.Aggressive),
  );
  return () => policy.execute(value);
}

/** opossum has no retry: a hand-written retry loop around its breaker (which brings the timeout). */
function opossum(lean: boolean): BenchRun {
  const breaker = lean ? leanOpossumBreaker(value) : opossumBreaker(value);
  return plainRetryLoop(() => breaker.fire(), RETRIES);
}

function cases(wrapRun: (run: BenchRun) => BenchRun): BenchCase[] {
  return [
    { name: 'nest-resilience', setup: () => wrapRun(ours()) },
    { name: 'nest-resilience (execute only, no inline run)', setup: () => wrapRun(oursExecuteOnly()) },
    { name: 'cockatiel', setup: () => wrapRun(cockatiel()) },
    { name: 'opossum (retry loop + breaker + timeout)', setup: () => wrapRun(opossum(false)) },
    { name: 'opossum, lean (no percentiles, no snapshots)', setup: () => wrapRun(opossum(true)) },
  ];
}

export function composedScenarios(): BenchScenario[] {
  return [
    {
      id: 'retry-breaker-timeout',
      title: 'retry → circuit breaker → timeout (aggressive), success',
      cases: [bareCase, ...cases((run) => run)],
    },
    {
      id: 'retry-breaker-timeout-concurrent',
      title: `retry → circuit breaker → timeout (aggressive), ${CONCURRENT_CALLS.toLocaleString('en-US')} calls at once`,
      callsPerRun: CONCURRENT_CALLS,
      cases: [bareBatchCase, ...cases((run) => batch(run))],
    },
  ];
}
