import {
  OptionsValidator,
  type CircuitBreakerConfig,
  type PipelineConfig,
  type RetryConfig,
  type TimeoutConfig,
} from '../../core/index.js';
import { handleRetryableRpcFailure, handleRpcFailure } from './rpc.predicates.js';

/**
 * The standard pipeline of a resilient RPC client, as options: total timeout → retry (exponential,
 * jitter, `retryAfter` honoured) → circuit breaker → attempt timeout (the "no reply" limit). Every part
 * may be overridden, or turned off with `false`.
 *
 * @publicApi
 */
export interface StandardRpcPipelineOptions {
  /** Default 10000 ms. */
  totalTimeout?: TimeoutConfig | false;
  /** Default: 3 retries, exponential from 200 ms with jitter, at most 5 s apart. */
  retry?: RetryConfig | false;
  /** Default: opens after 5 failures in a row, for 5 s. */
  circuitBreaker?: CircuitBreakerConfig | false;
  /** How long to wait for a reply, per attempt. Default 2000 ms. */
  attemptTimeout?: TimeoutConfig | false;
}

/** The standard RPC pipeline's defaults. @publicApi */
export const STANDARD_RPC_PIPELINE_DEFAULTS = {
  totalTimeout: 10_000,
  retry: { maxRetryAttempts: 3, backoffType: 'exponential', delay: 200, useJitter: true, maxDelay: 5_000 },
  circuitBreaker: { kind: 'consecutive', failureThreshold: 5, breakDuration: 5_000 },
  attemptTimeout: 2_000,
} as const satisfies Required<{
  [K in keyof StandardRpcPipelineOptions]: Exclude<StandardRpcPipelineOptions[K], false>;
}>;

/** The name under which `ResilientClientsModule` registers the standard pipeline with its defaults. @publicApi */
export const STANDARD_RPC_PIPELINE = 'rpc-standard';

const KNOWN_KEYS = ['totalTimeout', 'retry', 'circuitBreaker', 'attemptTimeout'] as const;

function timeoutOf(t: TimeoutConfig | false | undefined, fallback: number): number | undefined {
  if (t === false) return undefined;
  if (t === undefined) return fallback;
  return typeof t === 'number' ? t : t.timeout;
}

/**
 * The standard RPC pipeline as a `PipelineConfig` (the registry validates and builds it), after checking
 * the cross-option rule: attempt timeout ≤ total timeout. Retry and breaker use `handleRetryableRpcFailure`
 * and `handleRpcFailure` unless `shouldHandle` says otherwise.
 *
 * @publicApi
 */
export function standardRpcPipeline(options: StandardRpcPipelineOptions = {}, path = 'rpc'): PipelineConfig {
  const v = new OptionsValidator(path);
  const config = buildStandardRpcPipeline(options, v);
  v.throwIfInvalid('Invalid standard RPC pipeline');
  return config;
}

/** `standardRpcPipeline`, adding the problems it finds to `v` instead of throwing. @internal */
export function buildStandardRpcPipeline(options: StandardRpcPipelineOptions, v: OptionsValidator): PipelineConfig {
  const d = STANDARD_RPC_PIPELINE_DEFAULTS;
  if (typeof options !== 'object' || options === null) {
    v.add('', options, 'must be an object');
    options = {};
  }
  v.knownKeys(options, KNOWN_KEYS);
  const total = timeoutOf(options.totalTimeout, d.totalTimeout);
  const attempt = timeoutOf(options.attemptTimeout, d.attemptTimeout);
  if (total !== undefined && attempt !== undefined && attempt > total) {
    v.add('attemptTimeout', attempt, `must be <= totalTimeout (${total})`);
  }
  const retry: RetryConfig | undefined =
    options.retry === false ? undefined : { ...d.retry, shouldHandle: handleRetryableRpcFailure, ...options.retry };
  const given = options.circuitBreaker;
  const breaker: CircuitBreakerConfig | undefined =
    given === false
      ? undefined
      : given?.kind !== undefined && given.kind !== d.circuitBreaker.kind
        ? { breakDuration: d.circuitBreaker.breakDuration, shouldHandle: handleRpcFailure, ...given }
        : { ...d.circuitBreaker, shouldHandle: handleRpcFailure, ...given };
  return {
    totalTimeout: options.totalTimeout === false ? undefined : (options.totalTimeout ?? d.totalTimeout),
    retry,
    circuitBreaker: breaker,
    timeout: options.attemptTimeout === false ? undefined : (options.attemptTimeout ?? d.attemptTimeout),
  };
}
