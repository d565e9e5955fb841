import { adaptiveConcurrencyRegistration } from '../adaptive-concurrency/adaptive-concurrency.registration.js';
import type { AdaptiveConcurrencyOptions } from '../adaptive-concurrency/adaptive-concurrency.options.js';
import { adaptiveThrottlingRegistration } from '../adaptive-throttling/adaptive-throttling.registration.js';
import type { AdaptiveThrottlingStrategyOptions } from '../adaptive-throttling/adaptive-throttling.options.js';
import {
  chaosBehaviorRegistration,
  chaosFaultRegistration,
  chaosLatencyRegistration,
  chaosOutcomeRegistration,
} from '../chaos/chaos.registrations.js';
import type {
  ChaosBehaviorOptions,
  ChaosFaultOptions,
  ChaosLatencyOptions,
  ChaosOutcomeOptions,
} from '../chaos/chaos.options.js';
import { circuitBreakerRegistration } from '../circuit-breaker/circuit-breaker.registration.js';
import type { CircuitBreakerStrategyOptions } from '../circuit-breaker/circuit-breaker.options.js';
import { fallbackRegistration } from '../fallback/fallback.registration.js';
import type { FallbackStrategyOptions } from '../fallback/fallback.options.js';
import { hedgingRegistration } from '../hedging/hedging.registration.js';
import type { HedgingStrategyOptions } from '../hedging/hedging.options.js';
import { rateLimiterRegistration } from '../rate-limiter/rate-limiter.registration.js';
import type { RateLimiterStrategyOptions } from '../rate-limiter/rate-limiter.options.js';
import type { ResilienceStrategy, StrategyDefinition, StrategyRegistration } from '../resilience-strategy.interface.js';
import { retryRegistration } from '../retry/retry.registration.js';
import type { RetryStrategyOptions } from '../retry/retry.options.js';
import type { TelemetryListener } from '../telemetry/resilience-event.model.js';
import { StrategyTelemetry } from '../telemetry/strategy.telemetry.js';
import { systemTimeProvider, type TimeProvider } from '../time/time.provider.js';
import { timeoutRegistration } from '../timeout/timeout.registration.js';
import type { TimeoutStrategyOptions } from '../timeout/timeout.options.js';
import { ResilienceValidationError } from '../resilience.errors.js';
import { OptionsValidator } from '../utils/options.validation.js';
import { recordStrategyOptions, ResiliencePipeline, type StrategyDescriptionSource } from './resilience.pipeline.js';
import { RULES } from '../resilience.messages.js';

/** Options of a `ResiliencePipelineBuilder`: the pipeline's names, clock, random source and telemetry listeners. @publicApi */
export interface ResiliencePipelineBuilderOptions {
  /** Names the pipeline in telemetry, errors and validation messages. */
  name?: string;
  /** Distinguishes keyed instances of one named pipeline (e.g. one per host). */
  instanceName?: string;
  /** The clock every strategy uses. Default: the system clock. */
  timeProvider?: TimeProvider;
  /** Receivers of the pipeline's telemetry events. None by default (and then telemetry costs nothing). */
  telemetryListeners?: readonly TelemetryListener[];
  /** Random source in [0, 1) for jitter and chaos. Default `Math.random`. */
  random?: () => number;
  /** Prefixes validation paths instead of the pipeline name (e.g. `pipelines.orders` for config files). */
  validationPath?: string;
}

type Entry =
  | StrategyRegistration<unknown>
  | { readonly type: 'pipeline'; readonly pipeline: ResiliencePipeline<unknown>; readonly section?: string };

/** Options of `ResiliencePipelineBuilder.addPipeline`. @publicApi */
export interface AddPipelineOptions {
  /**
   * Only the strategies one configuration section of the pipeline added (`retry`, `circuitBreaker`…):
   * a pipeline registered from configuration lends that section — its circuit, its limiter, its options
   * and its name in telemetry — to the pipeline being built.
   */
  readonly section?: string;
}

/** The options `new ResiliencePipelineBuilder(options)` accepts. @internal */
export const BUILDER_OPTION_KEYS = [
  'name',
  'instanceName',
  'timeProvider',
  'telemetryListeners',
  'random',
  'validationPath',
] as const;

/**
 * The registration of one strategy with `options`, as `ResiliencePipelineBuilder.add` adds it; `label`
 * names it in validation paths instead of `strategies[i] (type)`.
 *
 * @publicApi
 */
export function strategyRegistration<TOptions extends object>(
  definition: StrategyDefinition<TOptions>,
  options: TOptions,
  label?: string,
): StrategyRegistration<TOptions> {
  return {
    type: definition.type,
    options,
    label,
    validate: (v, o, pipeline) => definition.validate?.(v, o, pipeline),
    create: (o, context) => definition.create(o, context),
  };
}

/** Registrations for options of one strategy. */
type RegistrationFactory<O> = (options: O) => StrategyRegistration<O>;

function factory<O extends object>(registration: StrategyDefinition<O>): RegistrationFactory<O> {
  return (options) => strategyRegistration(registration, options);
}

/** The registration factories of `builtInStrategies`. @publicApi */
export interface BuiltInStrategies {
  /** The registration of `addRetry`. */
  retry<T>(options: RetryStrategyOptions<T>): StrategyRegistration<RetryStrategyOptions<T>>;
  /** The registration of `addTimeout`. */
  timeout(options: TimeoutStrategyOptions): StrategyRegistration<TimeoutStrategyOptions>;
  /** The registration of `addFallback`. */
  fallback<T>(options: FallbackStrategyOptions<T>): StrategyRegistration<FallbackStrategyOptions<T>>;
  /** The registration of `addRateLimiter`. */
  rateLimiter(options: RateLimiterStrategyOptions): StrategyRegistration<RateLimiterStrategyOptions>;
  /** The registration of `addHedging`. */
  hedging<T>(options: HedgingStrategyOptions<T>): StrategyRegistration<HedgingStrategyOptions<T>>;
  /** The registration of `addChaosFault`. */
  chaosFault(options: ChaosFaultOptions): StrategyRegistration<ChaosFaultOptions>;
  /** The registration of `addChaosLatency`. */
  chaosLatency(options: ChaosLatencyOptions): StrategyRegistration<ChaosLatencyOptions>;
  /** The registration of `addChaosOutcome`. */
  chaosOutcome<T>(options: ChaosOutcomeOptions<T>): StrategyRegistration<ChaosOutcomeOptions<T>>;
  /** The registration of `addChaosBehavior`. */
  chaosBehavior(options: ChaosBehaviorOptions): StrategyRegistration<ChaosBehaviorOptions>;
  /** The registration of `addCircuitBreaker`. */
  circuitBreaker<T>(options: CircuitBreakerStrategyOptions<T>): StrategyRegistration<CircuitBreakerStrategyOptions<T>>;
}

/**
 * The registrations behind the built-in `add…` methods, for code that adds strategies generically. Each
 * strategy folder also exports its registration for `ResiliencePipelineBuilder.add`.
 *
 * @publicApi
 */
export const builtInStrategies = {
  retry: factory(retryRegistration),
  timeout: factory(timeoutRegistration),
  fallback: factory(fallbackRegistration),
  rateLimiter: factory(rateLimiterRegistration),
  hedging: factory(hedgingRegistration),
  chaosFault: factory(chaosFaultRegistration),
  chaosLatency: factory(chaosLatencyRegistration),
  chaosOutcome: factory(chaosOutcomeRegistration),
  chaosBehavior: factory(chaosBehaviorRegistration),
  circuitBreaker: factory(circuitBreakerRegistration),
} as BuiltInStrategies;

/**
 * Composes strategies into a `ResiliencePipeline`. The first strategy added is the outermost. Options are
 * validated in `build()`, which reports every problem of every strategy in one error.
 *
 * ```ts
 * const pipeline = new ResiliencePipelineBuilder()
 *   .addRetry({ maxRetryAttempts: 3, backoffType: 'exponential', delay: 2_000 })
 *   .addTimeout(10_000)
 *   .build();
 * const data = await pipeline.execute(({ signal }) => fetch(url, { signal }));
 * ```
 *
 * @publicApi
 */
export class ResiliencePipelineBuilder<T = unknown> {
  private readonly entries: Entry[] = [];
  private built = false;

  constructor(private readonly options: ResiliencePipelineBuilderOptions = {}) {}

  /** Adds a strategy described by a registration. */
  addStrategy<TOptions>(registration: StrategyRegistration<TOptions>): this {
    this.assertNotBuilt();
    this.entries.push(registration);
    return this;
  }

  /**
   * Adds the strategy a strategy folder's registration describes, with `options` (how every built-in
   * `add…` works): `builder.add(retryRegistration, { maxRetryAttempts: 2 })`.
   */
  add<TOptions extends object>(registration: StrategyDefinition<TOptions>, options: TOptions): this {
    return this.addStrategy(strategyRegistration(registration, options));
  }

  /** Retries handled outcomes with a backoff (Polly `AddRetry`). */
  addRetry(options: RetryStrategyOptions<T> = {}): this {
    return this.add(retryRegistration, options as RetryStrategyOptions<unknown>);
  }

  /** Cancels the inner call after a timeout, given in milliseconds or as options (Polly `AddTimeout`). */
  addTimeout(timeoutOrOptions: number | TimeoutStrategyOptions): this {
    const options = typeof timeoutOrOptions === 'number' ? { timeout: timeoutOrOptions } : timeoutOrOptions;
    return this.add(timeoutRegistration, options);
  }

  /**
   * Stops calling a failing dependency for a while (Polly `AddCircuitBreaker`, plus consecutive,
   * count-window and slow-call kinds, several half-open probes and a pluggable state store).
   */
  addCircuitBreaker(options: CircuitBreakerStrategyOptions<T> = {}): this {
    return this.add(circuitBreakerRegistration, options as CircuitBreakerStrategyOptions<unknown>);
  }

  /**
   * Admits calls within rate limits: token bucket, fixed window, sliding window or concurrency, each with
   * an optional queue; chained (`limits`), partitioned by a key from the context (`partitionKey`), or a
   * limiter of your own. Rejections throw `RateLimiterRejectedError` with `retryAfter`.
   */
  addRateLimiter(options: RateLimiterStrategyOptions = {}): this {
    return this.add(rateLimiterRegistration, options);
  }

  /** Limits concurrent calls (the bulkhead): `permitLimit` run, `queueLimit` wait in FIFO order. */
  addConcurrencyLimiter(
    permitLimitOrOptions:
      | number
      | {
          permitLimit: number;
          queueLimit?: number;
          name?: string;
          onRejected?: RateLimiterStrategyOptions['onRejected'];
        },
    queueLimit = 0,
  ): this {
    const options =
      typeof permitLimitOrOptions === 'number'
        ? { permitLimit: permitLimitOrOptions, queueLimit }
        : permitLimitOrOptions;
    return this.addStrategy({
      ...strategyRegistration(rateLimiterRegistration, { kind: 'concurrency', ...options }),
      type: 'concurrency-limiter',
    });
  }

  /**
   * Limits concurrent calls with a limit that follows measured latency (Gradient2 or AIMD), shedding
   * `sheddable` calls first; rejections throw `RateLimiterRejectedError` with a `reason`.
   */
  addAdaptiveConcurrencyLimiter(options: AdaptiveConcurrencyOptions = {}): this {
    return this.add(adaptiveConcurrencyRegistration, options);
  }

  /**
   * Rejects calls locally while the dependency refuses requests (Google SRE client-side throttling): with
   * probability `max(0, (requests − k × accepts) / (requests + 1))` over a sliding window. Rejections
   * throw `AdaptiveThrottlingRejectedError`.
   */
  addAdaptiveThrottling(options: AdaptiveThrottlingStrategyOptions<T> = {}): this {
    return this.add(adaptiveThrottlingRegistration, options as AdaptiveThrottlingStrategyOptions<unknown>);
  }

  /**
   * Races extra attempts against a slow or failing one (Polly `AddHedging`): latency mode (`delay` > 0),
   * parallel (0) or fallback (< 0).
   */
  addHedging(options: HedgingStrategyOptions<T> = {}): this {
    return this.add(hedgingRegistration, options as HedgingStrategyOptions<unknown>);
  }

  /** Injects faults: throws `fault` instead of calling, for `injectionRate` of the calls (Simmy). */
  addChaosFault(options: ChaosFaultOptions): this {
    return this.add(chaosFaultRegistration, options);
  }

  /** Injects latency before the call (cancellable). */
  addChaosLatency(options: ChaosLatencyOptions): this {
    return this.add(chaosLatencyRegistration, options);
  }

  /** Injects an outcome (a value or an error) instead of calling. */
  addChaosOutcome(options: ChaosOutcomeOptions<T>): this {
    return this.add(chaosOutcomeRegistration, options as ChaosOutcomeOptions<unknown>);
  }

  /** Injects a behaviour (any code) before the call. */
  addChaosBehavior(options: ChaosBehaviorOptions): this {
    return this.add(chaosBehaviorRegistration, options);
  }

  /** Replaces handled outcomes with a fallback value or action (Polly `AddFallback`). */
  addFallback(options: FallbackStrategyOptions<T>): this {
    return this.add(fallbackRegistration, options as FallbackStrategyOptions<unknown>);
  }

  /**
   * Nests a built pipeline at this position: its strategies (and their state: circuits, limiters) are
   * shared, not copied, and they keep reporting under their own pipeline's name. A pipeline handed out by
   * a `ResiliencePipelineRegistry` is followed through its reloads. With `{ section }`, only the
   * strategies that configuration section added.
   */
  addPipeline(pipeline: ResiliencePipeline<T>, options: AddPipelineOptions = {}): this {
    this.assertNotBuilt();
    this.entries.push({ type: 'pipeline', pipeline: pipeline, section: options.section });
    return this;
  }

  /** Validates every option and creates the pipeline. A builder builds once. */
  build(): ResiliencePipeline<T> {
    this.assertNotBuilt();
    const validator = new OptionsValidator(
      this.options.validationPath ?? (this.options.name ? `pipeline "${this.options.name}"` : ''),
    );
    this.validateBuilderOptions(validator.child('options'));
    this.entries.forEach((entry, index) => {
      const v = validator.child(('label' in entry && entry.label) || `strategies[${index}] (${entry.type})`);
      if ('pipeline' in entry) {
        if (!(entry.pipeline instanceof ResiliencePipeline))
          v.add('pipeline', entry.pipeline, RULES.instanceOf('ResiliencePipeline'));
        else if (entry.section !== undefined && entry.pipeline.sectionAsStrategy(entry.section) === undefined)
          v.add('section', entry.section, RULES.noSuchSection);
      } else if (typeof entry.options !== 'object' || entry.options === null) {
        v.add('options', entry.options, RULES.object);
      } else {
        entry.validate?.(v, entry.options, { name: this.options.name, instanceName: this.options.instanceName });
      }
    });
    validator.throwIfInvalid(this.options.name ? `Invalid resilience pipeline "${this.options.name}"` : undefined);
    this.built = true;

    const timeProvider = this.options.timeProvider ?? systemTimeProvider;
    const random = this.options.random ?? Math.random;
    const listeners = this.options.telemetryListeners ?? [];
    const source = (strategyType: string, strategyName?: string) => ({
      pipelineName: this.options.name,
      pipelineInstanceName: this.options.instanceName,
      strategyName,
      strategyType,
    });
    const strategies: ResilienceStrategy<unknown>[] = [];
    const descriptions: StrategyDescriptionSource[] = [];
    const sections: (string | undefined)[] = [];
    for (const entry of this.entries) {
      if ('pipeline' in entry) {
        const nested = entry.pipeline;
        const section = entry.section;
        if (section !== undefined) {
          strategies.push(nested.sectionAsStrategy(section)!);
          descriptions.push({ describe: () => nested.describeSection(section) });
          sections.push(undefined);
        } else if (nested._reloadable) {
          // A registry's pipeline: run whatever it runs at the time of the call.
          strategies.push(nested.asStrategy());
          descriptions.push({ describe: () => nested.describe() });
          sections.push(undefined);
        } else {
          const components = nested._components;
          strategies.push(...(components?.strategies ?? []));
          descriptions.push(...(components?.descriptions ?? []));
          sections.push(...(components?.strategies ?? []).map(() => undefined));
        }
        continue;
      }
      const name = (entry.options as { name?: string }).name;
      const description = { type: entry.type, name };
      recordStrategyOptions(description, entry.options);
      descriptions.push(description);
      sections.push(entry.section);
      strategies.push(
        entry.create(entry.options, {
          timeProvider,
          random,
          telemetry: new StrategyTelemetry(source(entry.type, name), listeners),
          pipelineName: this.options.name,
          pipelineInstanceName: this.options.instanceName,
        }),
      );
    }
    return new ResiliencePipeline<T>({
      strategies,
      descriptions,
      sections,
      timeProvider,
      telemetry: new StrategyTelemetry(source('pipeline'), listeners),
    });
  }

  private validateBuilderOptions(v: OptionsValidator): void {
    const o = this.options;
    v.knownKeys(o, BUILDER_OPTION_KEYS)
      .string('name', o.name)
      .string('instanceName', o.instanceName)
      .func('random', o.random);
    if (o.timeProvider !== undefined && typeof (o.timeProvider as Partial<TimeProvider>).now !== 'function') {
      v.add('timeProvider', o.timeProvider, RULES.instanceOf('TimeProvider'));
    }
    if (o.telemetryListeners !== undefined) {
      if (!Array.isArray(o.telemetryListeners)) v.add('telemetryListeners', o.telemetryListeners, RULES.array);
      else
        o.telemetryListeners.forEach((l: Partial<TelemetryListener>, i) => {
          if (typeof l?.write !== 'function') v.add(`telemetryListeners[${i}]`, l, RULES.telemetryListener);
        });
    }
  }

  private assertNotBuilt(): void {
    if (this.built) {
      throw new ResilienceValidationError(
        [{ path: 'builder', value: this.options.name, rule: RULES.builtAlready }],
        'ResiliencePipelineBuilder misuse',
      );
    }
  }
}
