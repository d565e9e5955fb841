import {
  isTimeoutRejectedError,
  ResilienceContext,
  ResiliencePipelineBuilder,
  type AdaptiveConcurrencyOptions,
  type AdaptiveThrottlingStrategyOptions,
  type CircuitBreakerStrategyOptions,
  type RetryBudgetOptions,
  type RetryStrategyOptions,
} from '../../src/core/index.js';
import { DependencyOverloadedError } from './dependency.model.js';
import type { InstanceEnvironment, SimClient, SimPolicy } from './overload.scenario.js';

/** Adds strategies to one instance's pipeline (outermost first). */
export type Layer = (builder: ResiliencePipelineBuilder, env: InstanceEnvironment) => void;

/** One row of the table with our strategies. */
export interface PipelinePolicy {
  readonly name: string;
  /**
   * The caller's deadline becomes the context's (`ResilienceContextOptions.deadline`): the pipeline ends
   * the call when it passes and a retry never starts an attempt past it. Each attempt carries
   * `context.deadline` (the sooner of the caller's deadline and the attempt's timeout) to the dependency,
   * which drops the work once it has passed or the caller cancelled.
   */
  readonly callerDeadline?: boolean;
  /** The strategies around each attempt; every policy also gets the client's attempt timeout, innermost. */
  readonly layers: readonly Layer[];
}

/** Three retries, exponential backoff from 50 ms with jitter. */
export const RETRY: RetryStrategyOptions = {
  maxRetryAttempts: 3,
  backoffType: 'exponential',
  delay: 50,
  useJitter: true,
};

/**
 * One retry per five calls, and a floor of one retry per second per instance: the default floor (10/s)
 * is sized for busier instances than these 35 calls per second.
 */
export const BUDGET: RetryBudgetOptions = { ratio: 0.2, minRetriesPerSecond: 1, window: 5_000 };

/** Opens at half the calls failing over 2 s (at least 20 calls), for 1 s. */
export const BREAKER: CircuitBreakerStrategyOptions = {
  failureRatio: 0.5,
  samplingDuration: 2_000,
  minimumThroughput: 20,
  breakDuration: 1_000,
};

/**
 * What adaptive throttling counts as not accepted: the dependency's own refusals. The simulated
 * dependency answers a full queue with `DependencyOverloadedError` (a 503 without a status property), and
 * an attempt that timed out is the other sign of a dependency that cannot keep up. The default predicate's
 * inner-breaker rejections are left out: they are this client's refusals, not the dependency's, and
 * counting them keeps the throttle shut for a whole window after the breaker has closed (in this scenario
 * recovery then takes 5 s instead of 0.25 s).
 */
export function isDependencyRefusal(error: unknown): boolean {
  return error instanceof DependencyOverloadedError || isTimeoutRejectedError(error);
}

/**
 * K = 2 (the SRE book's) over a 2 s window: the default window of two minutes is longer than the trigger,
 * and the window must forget the trigger's refusals for the throttle to let the load back once capacity
 * returns. Each instance counts some 70 calls in 2 s, enough for the probability to be more than noise.
 */
export const THROTTLING: AdaptiveThrottlingStrategyOptions = {
  k: 2,
  window: 2_000,
  shouldHandle: ({ outcome }) => !outcome.ok && isDependencyRefusal(outcome.error),
};

/**
 * Gradient2 with its defaults (tolerance 1.5, growth 4 per window of 10 calls), from an initial limit of
 * 10 per instance: the dependency serves 8 at once, so 4 instances × 10 start just above what it can take
 * without queueing, and the limit finds its level from there (the default of 20 starts with a queue of
 * some 50 requests, which the first windows must drain).
 */
export const CONCURRENCY: AdaptiveConcurrencyOptions = {
  algorithm: 'gradient2',
  initialLimit: 10,
};

export const plainRetries: Layer = (builder) => builder.addRetry(RETRY);
export const retriesWithBudget: Layer = (builder) => builder.addRetry({ ...RETRY, budget: BUDGET });
export const circuitBreaker: Layer = (builder) => builder.addCircuitBreaker(BREAKER);
export const adaptiveThrottling: Layer = (builder) => builder.addAdaptiveThrottling(THROTTLING);
export const adaptiveConcurrency: Layer = (builder) => builder.addAdaptiveConcurrencyLimiter(CONCURRENCY);

/** The ladder of policies, in table order; each adds to the one before. */
export const POLICIES: readonly PipelinePolicy[] = [
  { name: 'no protection', layers: [] },
  { name: 'plain retries (3×, exponential)', layers: [plainRetries] },
  { name: 'retries + retry budget', layers: [retriesWithBudget] },
  { name: '+ circuit breaker', layers: [retriesWithBudget, circuitBreaker] },
  { name: '+ adaptive throttling', layers: [retriesWithBudget, adaptiveThrottling, circuitBreaker] },
  {
    name: '+ adaptive concurrency',
    layers: [retriesWithBudget, adaptiveThrottling, circuitBreaker, adaptiveConcurrency],
  },
  {
    name: '+ deadlines',
    callerDeadline: true,
    layers: [retriesWithBudget, adaptiveThrottling, circuitBreaker, adaptiveConcurrency],
  },
];

/** A policy of ours as the simulator runs it: one pipeline per instance, on the simulated clock. */
export function pipelinePolicy(policy: PipelinePolicy): SimPolicy {
  return {
    name: policy.name,
    createClient(env: InstanceEnvironment): SimClient {
      const builder = new ResiliencePipelineBuilder({ name: policy.name, timeProvider: env.time, random: env.random });
      for (const layer of policy.layers) layer(builder, env);
      const pipeline = builder.addTimeout(env.scenario.attemptTimeout).build();
      if (!policy.callerDeadline) {
        const attempt = (context: ResilienceContext) => env.attempt(context.signal);
        return () => pipeline.execute(attempt);
      }
      const attempt = (context: ResilienceContext) => env.attempt(context.signal, context.deadline);
      return (deadline) => pipeline.execute(attempt, new ResilienceContext({ deadline }));
    },
  };
}
