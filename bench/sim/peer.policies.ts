import type * as Cockatiel from 'cockatiel';
import type OpossumBreaker from 'opossum';
import { BREAKER, RETRY } from './overload.policies.js';
import type { InstanceEnvironment, SimClient, SimPolicy } from './overload.scenario.js';

/**
 * The rows of cockatiel and opossum with their closest configuration to ours (same attempt timeout,
 * retries, backoff and breaker thresholds). Neither has a retry budget or deadline propagation, so
 * those rows have no peer equivalent. A library that is not installed has no rows.
 */
export async function peerPolicies(): Promise<SimPolicy[]> {
  const cockatiel = await optionalImport<typeof Cockatiel>('cockatiel');
  const opossum = await optionalImport<{ default: typeof OpossumBreaker }>('opossum');
  const policies: SimPolicy[] = [];
  if (cockatiel) {
    policies.push(
      cockatielPolicy(cockatiel, 'cockatiel: plain retries (3×, exponential)', false),
      cockatielPolicy(cockatiel, 'cockatiel: retries + circuit breaker (no budget)', true),
    );
  }
  if (opossum) policies.push(opossumPolicy(opossum.default));
  return policies;
}

async function optionalImport<M>(name: string): Promise<M | undefined> {
  try {
    return (await import(name)) as M;
  } catch {
    return undefined;
  }
}

function cockatielPolicy(c: typeof Cockatiel, name: string, withBreaker: boolean): SimPolicy {
  return {
    name,
    usesGlobalTimers: true,
    createClient(env: InstanceEnvironment): SimClient {
      const notBroken = c.handleWhen((error) => !(error instanceof c.BrokenCircuitError));
      const retry = c.retry(notBroken, {
        maxAttempts: RETRY.maxRetryAttempts,
        backoff: new c.ExponentialBackoff({ initialDelay: RETRY.delay }),
      });
      const attemptTimeout = c.timeout(env.scenario.attemptTimeout, c.TimeoutStrategy.Cooperative);
      const breaker = c.circuitBreaker(c.handleAll, {
        halfOpenAfter: BREAKER.breakDuration!,
        breaker: new c.SamplingBreaker({
          threshold: BREAKER.failureRatio!,
          duration: BREAKER.samplingDuration!,
          minimumRps: (BREAKER.minimumThroughput! * 1_000) / BREAKER.samplingDuration!,
        }),
      });
      const policy = withBreaker ? c.wrap(retry, breaker, attemptTimeout) : c.wrap(retry, attemptTimeout);
      const attempt = ({ signal }: { signal: AbortSignal }) => env.attempt(signal);
      return () => policy.execute(attempt);
    },
  };
}

function opossumPolicy(CircuitBreaker: typeof OpossumBreaker): SimPolicy {
  return {
    name: 'opossum: circuit breaker + timeout (no retries)',
    usesGlobalTimers: true,
    createClient(env: InstanceEnvironment): SimClient {
      const breaker = new CircuitBreaker(() => env.attempt(undefined), {
        timeout: env.scenario.attemptTimeout,
        errorThresholdPercentage: BREAKER.failureRatio! * 100,
        volumeThreshold: BREAKER.minimumThroughput,
        rollingCountTimeout: BREAKER.samplingDuration,
        rollingCountBuckets: 10,
        resetTimeout: BREAKER.breakDuration,
        rollingPercentilesEnabled: false,
        enableSnapshots: false,
      });
      return () => breaker.fire();
    },
  };
}
