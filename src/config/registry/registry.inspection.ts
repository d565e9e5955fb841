import {
  ConcurrencyLimiter,
  type AdaptiveThrottlingPort,
  type CircuitBreakerKind,
  type CircuitPolicy,
  type CircuitPort,
  type CircuitSnapshot,
  type CircuitState,
  type InspectableRateLimiter,
  type RateLimiter,
  type RateLimiterStrategyOptions,
  type ResiliencePipeline,
  type TimeProvider,
} from '../../core/index.js';

/**
 * One circuit as its store holds it now: who owns it, its state, the figures of its window and when it
 * admits calls again. Read through `ResiliencePipelineRegistry.circuits()` / `circuitState()`.
 *
 * @publicApi
 */
export interface CircuitInfo {
  /** The pipeline (or decorated method, `Class.method`) the breaker belongs to. */
  readonly pipelineName: string;
  /** The pipeline's instance key, when it has one. */
  readonly instanceKey: string | undefined;
  /** The breaker's `name` option, when set. */
  readonly strategyName: string | undefined;
  /** The circuit's key in its store (shared by every breaker that drives the same circuit). */
  readonly circuitKey: string;
  /** When the breaker opens (its kind). */
  readonly kind: CircuitBreakerKind;
  /** The circuit's state in its store. */
  readonly state: CircuitState;
  /** Calls measured in the window (since the last success for `consecutive`). */
  readonly throughput: number;
  /** Failed (or slow) calls among them. */
  readonly failures: number;
  /** `failures / throughput`; 0 when nothing was measured. */
  readonly failureRatio: number;
  /** What opens the circuit: failures in a row (`consecutive`) or the failure ratio (the other kinds). */
  readonly threshold: number;
  /** When open: milliseconds until a probe is admitted (0 once it is due). Otherwise undefined. */
  readonly retryAfter: number | undefined;
  /** The length of the last (or current) break, in milliseconds. */
  readonly breakDuration: number;
  /** When the circuit last changed state (the pipeline clock's milliseconds; 0 if it never did). */
  readonly lastTransitionAt: number;
  /** True when the figures come from this process because the shared store could not be read. */
  readonly stale: boolean;
}

/** One limiter of a named pipeline, as it is now. @publicApi */
export interface LimiterInfo {
  /** The pipeline (or decorated method, `Class.method`) the limiter belongs to. */
  readonly pipelineName: string;
  /** The pipeline's instance key, when it has one. */
  readonly instanceKey: string | undefined;
  /**
   * `rateLimiter` or `concurrencyLimiter` (the configuration section), `adaptiveConcurrency` for an
   * adaptive concurrency limiter, `adaptiveThrottling` for an adaptive throttling strategy (see
   * `throttle`), or `strategy` for another one added by code.
   */
  readonly section: 'rateLimiter' | 'concurrencyLimiter' | 'adaptiveConcurrency' | 'adaptiveThrottling' | 'strategy';
  /**
   * The limit's kind (`concurrency`, `token-bucket`, `fixed-window`, `sliding-window`,
   * `adaptive-gradient2`, `adaptive-aimd`, `adaptive-throttling`) or `custom`.
   */
  readonly kind: string;
  /** Permits (or tokens) per window, or calls at once for `concurrency`. */
  readonly permitLimit: number | undefined;
  /** Concurrency: calls running now. Token bucket: tokens taken from a full bucket. */
  readonly permitsInUse: number | undefined;
  /** Callers waiting for a permit. */
  readonly queueLength: number;
  /** Calls that may wait, when the limit has a queue. */
  readonly queueLimit: number | undefined;
  /** Partitioned limiters: partitions alive now. */
  readonly partitions: number | undefined;
  /**
   * Distributed (shared through a store): the figures above are this process's view only. For adaptive
   * throttling with `fleet`: see `throttle.shared`.
   */
  readonly distributed: boolean;
  /**
   * Calls turned away since the limiter was made, when the limiter counts them (adaptive concurrency;
   * adaptive throttling: calls rejected locally).
   */
  readonly rejections?: number;
  /** Adaptive throttling's figures now: requests and accepts in its window, and the reject probability. */
  readonly throttle?: {
    readonly requests: number;
    readonly accepts: number;
    readonly rejectProbability: number;
    readonly k: number;
    /** The window, in milliseconds. */
    readonly window: number;
    /**
     * Shared by the fleet (`fleet`) only: true while the figures are the fleet's, false while this
     * instance's own counts decide (before its first sync, while the store cannot be reached).
     */
    readonly shared?: boolean;
  };
}

/** A pipeline instance the registry knows, with its owner. @internal */
export interface InspectedPipeline {
  readonly name: string;
  readonly key: string | undefined;
  readonly pipeline: ResiliencePipeline<unknown>;
}

/** A limiter the registry shares, with the options it was made from. @internal */
export interface InspectedLimiter {
  readonly name: string;
  readonly key: string | undefined;
  readonly section: 'rateLimiter' | 'concurrencyLimiter';
  readonly options: RateLimiterStrategyOptions;
  readonly limiter: RateLimiter;
}

interface BreakerRef {
  readonly name: string;
  readonly key: string | undefined;
  readonly breaker: CircuitPort;
}

/**
 * What a registry knows and inspection reads: the pipelines it hands out, those other code built with its
 * `createBuilder` (decorated methods' own strategies; held weakly), and its shared limiters. Reads every
 * strategy through its ports (`circuit`, `limiter`).
 *
 * @internal
 */
export class RegistryInspector {
  /** Pipelines built from `createBuilder` by other code, held weakly: being inspectable keeps none alive. */
  private external: { name: string; key: string | undefined; ref: WeakRef<ResiliencePipeline<unknown>> }[] = [];

  constructor(
    private readonly registered: () => Iterable<InspectedPipeline>,
    private readonly sharedLimiters: () => Iterable<InspectedLimiter>,
    private readonly timeProvider: TimeProvider,
  ) {}

  /** Makes a pipeline built by other code inspectable under `name`. */
  track(name: string, key: string | undefined, pipeline: ResiliencePipeline<unknown>): void {
    // Stryker disable next-line ConditionalExpression,EqualityOperator,MethodExpression: equivalent — pruning bounds memory only; which live pipelines are listed does not change
    if (this.external.length >= 1_024) this.external = this.external.filter((e) => e.ref.deref() !== undefined);
    this.external.push({ name, key, ref: new WeakRef<ResiliencePipeline<unknown>>(pipeline) });
  }

  /** Every circuit, one entry per circuit however many pipelines share it. */
  circuits(): Promise<CircuitInfo[]> {
    const now = this.timeProvider.now();
    return Promise.all(findBreakers(this.pipelines()).map((ref) => readCircuit(ref, now)));
  }

  /** The circuit of `name` (instance `key`), if it has one. */
  async circuitState(name: string, key: string | undefined): Promise<CircuitInfo | undefined> {
    const [ref] = this.breakerRefs(name, key ?? '');
    return ref ? readCircuit(ref, this.timeProvider.now()) : undefined;
  }

  /** The breakers of `name`: of instance `key` (`''`: the one without a key), or of every instance. */
  breakers(name: string, key: string | undefined): CircuitPort[] {
    return this.breakerRefs(name, key).map((ref) => ref.breaker);
  }

  /** The names of every pipeline inspected: the registry's and those built by other code still alive. */
  trackedNames(): string[] {
    return [...this.pipelines()].map((p) => p.name);
  }

  private breakerRefs(name: string, key: string | undefined): BreakerRef[] {
    const matching = [...this.pipelines()].filter(
      (p) => p.name === name && (key === undefined || p.key === (key || undefined)),
    );
    return findBreakers(matching);
  }

  /** Figures of every limiter. */
  limiterStatistics(): LimiterInfo[] {
    return describeLimiters(this.sharedLimiters(), this.pipelines());
  }

  clear(): void {
    this.external.length = 0;
  }

  private *pipelines(): Iterable<InspectedPipeline> {
    yield* this.registered();
    for (const { name, key, ref } of this.external) {
      const pipeline = ref.deref();
      // Stryker disable next-line ConditionalExpression: equivalent in tests — false only once the garbage collector dropped the pipeline
      if (pipeline) yield { name, key, pipeline };
    }
  }
}

/** The circuit breakers of the given pipelines, one per circuit key and store (the first owner wins). @internal */
export function findBreakers(pipelines: Iterable<InspectedPipeline>): BreakerRef[] {
  const seen = new Map<unknown, Set<string>>();
  const found: BreakerRef[] = [];
  for (const { name, key, pipeline } of pipelines) {
    for (const { circuit: breaker } of pipeline.strategyPorts()) {
      if (!breaker) continue;
      let keys = seen.get(breaker.store);
      if (!keys) seen.set(breaker.store, (keys = new Set()));
      if (keys.has(breaker.circuitKey)) continue;
      keys.add(breaker.circuitKey);
      found.push({ name, key, breaker });
    }
  }
  return found;
}

/** Reads one breaker's circuit from its store; falls back to what this process saw if the store fails. @internal */
export async function readCircuit(ref: BreakerRef, now: number): Promise<CircuitInfo> {
  const { breaker } = ref;
  let snapshot: CircuitSnapshot | undefined;
  try {
    snapshot = await breaker.store.exportSnapshot(breaker.circuitKey, breaker.policy);
  } catch {
    // Unreadable: the figures this process saw, marked stale.
  }
  return toCircuitInfo(ref, breaker.policy, snapshot, now);
}

function toCircuitInfo(
  ref: BreakerRef,
  policy: CircuitPolicy,
  snapshot: CircuitSnapshot | undefined,
  now: number,
): CircuitInfo {
  const { breaker } = ref;
  const state = snapshot?.state ?? breaker.circuitState;
  const { throughput, failures } = snapshot ? windowFigures(snapshot, policy, now) : { throughput: 0, failures: 0 };
  return {
    pipelineName: ref.name,
    instanceKey: ref.key,
    strategyName: breaker.strategyName,
    circuitKey: breaker.circuitKey,
    kind: policy.kind,
    state,
    throughput,
    failures,
    failureRatio: throughput === 0 ? 0 : failures / throughput,
    threshold: policy.kind === 'consecutive' ? policy.failureThreshold : policy.failureRatio,
    retryAfter: state === 'open' && snapshot ? Math.max(0, snapshot.blockedUntil - now) : undefined,
    breakDuration: snapshot?.lastBreakDuration ?? 0,
    lastTransitionAt: snapshot?.lastTransitionAt ?? 0,
    stale: snapshot === undefined,
  };
}

function windowFigures(
  snapshot: CircuitSnapshot,
  policy: CircuitPolicy,
  now: number,
): { throughput: number; failures: number } {
  const metrics = snapshot.metrics;
  switch (metrics.kind) {
    case 'consecutive':
      return { throughput: metrics.consecutiveFailures, failures: metrics.consecutiveFailures };
    case 'count-window': {
      let failures = 0;
      for (const c of metrics.outcomes) if (c === '1') failures++;
      return { throughput: metrics.outcomes.length, failures };
    }
    case 'time-window':
    case 'slow-call': {
      let throughput = 0;
      let failures = 0;
      for (const [startedAt, s, f] of metrics.windows) {
        if (now - startedAt >= policy.samplingDuration) continue; // expired, dropped at the next call
        throughput += s + f;
        failures += f;
      }
      return { throughput, failures };
    }
  }
}

/** Figures of the registry's shared limiters and of limiter strategies added by code. @internal */
export function describeLimiters(
  shared: Iterable<InspectedLimiter>,
  pipelines: Iterable<InspectedPipeline>,
): LimiterInfo[] {
  const described = new Set<RateLimiter>();
  const result: LimiterInfo[] = [];
  for (const s of shared) {
    described.add(s.limiter);
    result.push(describeLimiter(s.name, s.key, s.section, s.limiter, s.options));
  }
  const throttles = new Set<AdaptiveThrottlingPort>();
  for (const { name, key, pipeline } of pipelines) {
    for (const { limiter, throttle } of pipeline.strategyPorts()) {
      if (throttle && !throttles.has(throttle)) {
        throttles.add(throttle);
        result.push(describeThrottle(name, key, throttle));
      }
      if (!limiter || described.has(limiter)) continue;
      described.add(limiter);
      result.push(describeLimiter(name, key, 'strategy', limiter, undefined));
    }
  }
  return result;
}

/** An adaptive throttling strategy as a limiter: no permits, its figures in `throttle`. */
function describeThrottle(name: string, key: string | undefined, port: AdaptiveThrottlingPort): LimiterInfo {
  const { requests, accepts, rejectProbability, throttled, k, window, shared } = port.statistics;
  return {
    pipelineName: name,
    instanceKey: key,
    section: 'adaptiveThrottling',
    kind: 'adaptive-throttling',
    permitLimit: undefined,
    permitsInUse: undefined,
    queueLength: 0,
    queueLimit: undefined,
    partitions: undefined,
    distributed: shared !== undefined,
    rejections: throttled,
    throttle: { requests, accepts, rejectProbability, k, window, ...(shared === undefined ? {} : { shared }) },
  };
}

function describeLimiter(
  name: string,
  key: string | undefined,
  section: LimiterInfo['section'],
  limiter: RateLimiter,
  options: RateLimiterStrategyOptions | undefined,
): LimiterInfo {
  const snapshot = (limiter as Partial<InspectableRateLimiter>).snapshot?.();
  if (snapshot) {
    return {
      pipelineName: name,
      instanceKey: key,
      ...snapshot,
      section: snapshot.section === 'adaptiveConcurrency' ? snapshot.section : section,
      partitions: undefined,
      distributed: false,
    };
  }
  const view = limiter as Partial<{
    readonly queuedCount: number;
    readonly availableTokens: number;
    readonly partitionCount: number;
  }>;
  let kind: string = options?.kind ?? (options?.limits ? 'chained' : 'custom');
  let permitLimit = options?.kind === 'token-bucket' ? options.tokenLimit : options?.permitLimit;
  let permitsInUse: number | undefined;
  if (limiter instanceof ConcurrencyLimiter) {
    kind = 'concurrency';
    permitLimit = limiter.permitLimit;
    permitsInUse = limiter.permitLimit - limiter.availablePermits;
  } else if (typeof view.availableTokens === 'number' && permitLimit !== undefined) {
    permitsInUse = Math.max(0, permitLimit - view.availableTokens);
  }
  return {
    pipelineName: name,
    instanceKey: key,
    section,
    kind,
    permitLimit,
    permitsInUse,
    queueLength: typeof view.queuedCount === 'number' ? view.queuedCount : 0,
    queueLimit: options?.queueLimit,
    partitions: typeof view.partitionCount === 'number' ? view.partitionCount : undefined,
    distributed: options?.distributed === true,
  };
}
