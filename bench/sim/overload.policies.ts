import {
  ResilienceContext,
  ResiliencePipelineBuilder,
  ResiliencePropertyKey,
  type CircuitBreakerStrategyOptions,
  type RetryBudgetOptions,
  type RetryStrategyOptions,
} from '../../src/core/index.js';
import type { InstanceEnvironment, SimClient, SimPolicy } from './overload.scenario.js';

/** The absolute (simulated) time at which the caller of a call gives up. */
export const CALLER_DEADLINE = new ResiliencePropertyKey<number>('sim.callerDeadline');

/** Adds strategies to one instance's pipeline (outermost first). */
export type Layer = (builder: ResiliencePipelineBuilder, env: InstanceEnvironment) => void;

/** One row of the table with our strategies. */
export interface PipelinePolicy {
  readonly name: string;
  /**
   * Each attempt carries the caller's remaining budget (the sooner of the caller's deadline and the
   * attempt's timeout) to the dependency, which drops the work once it has passed or the caller cancelled.
   */
  readonly propagatesDeadline?: boolean;
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

export const plainRetries: Layer = (builder) => builder.addRetry(RETRY);
export const retriesWithBudget: Layer = (builder) => builder.addRetry({ ...RETRY, budget: BUDGET });
export const circuitBreaker: Layer = (builder) => builder.addCircuitBreaker(BREAKER);

/** The caller's deadline bounds the whole call, retries included: the outer timeout is what remains of it. */
export const callerDeadline: Layer = (builder, { time }) =>
  builder.addTimeout({
    timeoutGenerator: ({ context }) => context.properties.getOrDefault(CALLER_DEADLINE, Infinity) - time.now(),
  });

/**
 * The ladder of policies, in table order. Each adds to the one before; a policy that needs a strategy
 * this build does not have is listed in `PENDING_POLICIES` instead, and stays out of the table.
 */
export const POLICIES: readonly PipelinePolicy[] = [
  { name: 'no protection', layers: [] },
  { name: 'plain retries (3×, exponential)', layers: [plainRetries] },
  { name: 'retries + retry budget', layers: [retriesWithBudget] },
  { name: '+ circuit breaker', layers: [retriesWithBudget, circuitBreaker] },
  { name: '+ deadlines', propagatesDeadline: true, layers: [callerDeadline, retriesWithBudget, circuitBreaker] },
];

/** Rows of the ladder whose strategies this build does not have yet, with what each needs. */
export const PENDING_POLICIES: readonly { readonly name: string; readonly needs: string }[] = [
  { name: '+ adaptive throttling', needs: 'client-side adaptive throttling' },
  { name: '+ adaptive concurrency', needs: 'the adaptive concurrency limiter' },
];

/** A policy of ours as the simulator runs it: one pipeline per instance, on the simulated clock. */
export function pipelinePolicy(policy: PipelinePolicy): SimPolicy {
  return {
    name: policy.name,
    createClient(env: InstanceEnvironment): SimClient {
      const builder = new ResiliencePipelineBuilder({ name: policy.name, timeProvider: env.time, random: env.random });
      for (const layer of policy.layers) layer(builder, env);
      const pipeline = builder.addTimeout(env.scenario.attemptTimeout).build();
      const attemptTimeout = env.scenario.attemptTimeout;
      const attempt = policy.propagatesDeadline
        ? (context: ResilienceContext) =>
            env.attempt(
              context.signal,
              Math.min(context.properties.getOrDefault(CALLER_DEADLINE, Infinity), env.time.now() + attemptTimeout),
            )
        : (context: ResilienceContext) => env.attempt(context.signal);
      return (deadline) => {
        const context = new ResilienceContext();
        context.properties.set(CALLER_DEADLINE, deadline);
        return pipeline.execute(attempt, context);
      };
    },
  };
}
