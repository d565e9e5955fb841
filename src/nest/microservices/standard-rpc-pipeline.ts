import { OptionsValidator, type CircuitBreakerConfig, type RetryConfig, type TimeoutConfig } from '../../core/index.js';
import { type ConfigData, type PipelineConfig } from '../../config/index.js';
import { checkAttemptTimeout, coerceStandardPipelineOptions } from '../options/standard-pipeline.options.js';
import { handleRetryableRpcFailure, handleRpcFailure } from './rpc.predicates.js';
import { NEST_RULES } from '../resilience.messages.js';

/**
 * The standard pipeline of a resilient RPC client, as options: total timeout → retry (exponential,
 * jitter, `retryAfter` honoured) → circuit breaker → attempt timeout (the "no reply" limit). Every part
 * may be overridden, or turned off with `false`. As all module configuration, durations and numbers may
 * be strings (`"2s"`, `"00:00:30"`, `"PT30S"`, `"3"`): they are read before any rule is checked.
 *
 * @publicApi
 */
export interface StandardRpcPipelineOptions {
  /** Default 10000 ms. */
  totalTimeout?: ConfigData<TimeoutConfig> | false;
  /** Default: 3 retries, exponential from 200 ms with jitter, at most 5 s apart. */
  retry?: ConfigData<RetryConfig> | false;
  /** Default: opens after 5 failures in a row, for 5 s. */
  circuitBreaker?: ConfigData<CircuitBreakerConfig> | false;
  /** How long to wait for a reply, per attempt. Default 2000 ms. */
  attemptTimeout?: ConfigData<TimeoutConfig> | false;
}

/** The standard options once their strings are read (what the rules and the registry see). */
interface CoercedRpcOptions {
  totalTimeout?: TimeoutConfig | false;
  retry?: RetryConfig | false;
  circuitBreaker?: CircuitBreakerConfig | false;
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

/** The timeout in ms, or `undefined` when off or unreadable (validation reports the value itself). */
function timeoutOf(t: TimeoutConfig | false | undefined, fallback: number): number | undefined {
  if (t === false) return undefined;
  if (t === undefined) return fallback;
  const ms: unknown = typeof t === 'object' && t !== null ? t.timeout : t;
  return typeof ms === 'number' ? ms : undefined;
}

/**
 * The standard RPC pipeline as a `PipelineConfig` (the registry validates and builds it), after reading
 * the strings of its options and checking the cross-option rules on the values read: attempt timeout ≤
 * total timeout, and a time-based breaker samples at least two attempt timeouts (as the standard HTTP
 * pipeline). Retry and breaker use `handleRetryableRpcFailure`
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
export function buildStandardRpcPipeline(data: StandardRpcPipelineOptions, v: OptionsValidator): PipelineConfig {
  const d = STANDARD_RPC_PIPELINE_DEFAULTS;
  let options = coerceStandardPipelineOptions(data) as CoercedRpcOptions;
  if (typeof options !== 'object' || options === null) {
    v.add('', options, NEST_RULES.object);
    options = {};
  }
  v.knownKeys(options, KNOWN_KEYS);
  const total = timeoutOf(options.totalTimeout, d.totalTimeout);
  const attempt = timeoutOf(options.attemptTimeout, d.attemptTimeout);
  const retry: RetryConfig | undefined =
    options.retry === false ? undefined : { ...d.retry, shouldHandle: handleRetryableRpcFailure, ...options.retry };
  const given = options.circuitBreaker;
  const breaker: CircuitBreakerConfig | undefined =
    given === false
      ? undefined
      : given?.kind !== undefined && given.kind !== d.circuitBreaker.kind
        ? { breakDuration: d.circuitBreaker.breakDuration, shouldHandle: handleRpcFailure, ...given }
        : { ...d.circuitBreaker, shouldHandle: handleRpcFailure, ...given };
  checkAttemptTimeout(v, '', total, attempt, breaker);
  return {
    totalTimeout: options.totalTimeout === false ? undefined : (options.totalTimeout ?? d.totalTimeout),
    retry,
    circuitBreaker: breaker,
    timeout: options.attemptTimeout === false ? undefined : (options.attemptTimeout ?? d.attemptTimeout),
  };
}
