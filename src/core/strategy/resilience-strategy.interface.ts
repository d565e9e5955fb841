import type { ResilienceContext } from '../context/resilience.context.js';
import type { ResilienceEventDescriptors } from '../telemetry/event.catalog.js';
import type { ResilienceEventMap } from '../telemetry/resilience-event.model.js';
import type { OptionsSchema } from './options.schema.js';
import type { StrategyTelemetry } from '../telemetry/strategy.telemetry.js';
import type { TimeProvider } from '../time/time.provider.js';
import type { OptionsValidator } from './options.validation.js';

/**
 * Runs the rest of the pipeline (the inner strategies and then the callback). It settles the way the
 * callback did: fulfilled with its value or rejected with its error. It never throws synchronously.
 *
 * @publicApi
 */
export type StrategyNext<T> = (context: ResilienceContext) => Promise<T>;

/**
 * One layer of a pipeline. A strategy receives the rest of the pipeline as `next`, may call it any number
 * of times, and settles with the value or error the caller should see.
 *
 * Inside the engine a settled promise *is* the outcome: wrapping every value in an `Outcome` object would
 * cost an extra promise hop per layer (measured: 3.5× a bare `await` instead of 1.5× for one layer).
 * `Outcome` objects are built only where a user callback or predicate needs one.
 *
 * @publicApi
 */
export interface ResilienceStrategy<T = unknown> {
  /** Runs `next` (the rest of the pipeline and the callback) under this strategy; resolves or rejects with the result. */
  execute(next: StrategyNext<T>, context: ResilienceContext): Promise<T>;
  /** Releases what the strategy holds (timers, queues); called by `ResiliencePipeline.dispose()`. */
  dispose?(): void | Promise<void>;
  /**
   * What inspection reads of the strategy — the registry's `circuits()` and `limiterStatistics()`, and so
   * the admin API, health and the dashboard. Absent: nothing to inspect.
   */
  readonly ports?: StrategyPorts;
}

/**
 * The ports a strategy offers to inspection. Each strategy folder adds its own by declaration merging
 * (`circuit` from `circuit-breaker/`, `limiter` from `rate-limiter/`); a strategy of one's own may offer
 * any of them.
 *
 * @publicApi
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled by declaration merging
export interface StrategyPorts {}

/** What a strategy factory receives from the builder. @publicApi */
export interface StrategyBuilderContext {
  /** The pipeline's clock: read time and wait through it, never through globals. */
  readonly timeProvider: TimeProvider;
  /** Returns a number in [0, 1); injectable for deterministic jitter and chaos. */
  readonly random: () => number;
  /** Emits this strategy's events to the pipeline's listeners. */
  readonly telemetry: StrategyTelemetry;
  /** The pipeline's name, when it has one. */
  readonly pipelineName: string | undefined;
  /** The pipeline instance's name (a registry key), when it has one. */
  readonly pipelineInstanceName: string | undefined;
}

/** The pipeline a strategy is validated for. @publicApi */
export interface StrategyPipelineInfo {
  /** The pipeline's name, when it has one. */
  readonly name?: string;
  /** The pipeline instance's name (a registry key), when it has one. */
  readonly instanceName?: string;
}

/**
 * One strategy of a pipeline being built: its kind, its options, how to validate them and how to create
 * it once the pipeline is built. `ResiliencePipelineBuilder.addStrategy` takes one.
 *
 * @publicApi
 */
export interface StrategyRegistration<TOptions> {
  /** The kind of strategy, e.g. `retry`; used in telemetry and validation paths. */
  readonly type: string;
  /** The strategy's options, as given to `validate` and `create`. */
  readonly options: TOptions;
  /** Names the strategy in validation paths instead of `strategies[i] (type)`, e.g. `retry` in a config file. */
  readonly label?: string;
  /**
   * The configuration section that added the strategy (`retry`, `circuitBreaker`…), so that
   * `pipeline.sectionAsStrategy(section)` can hand it to another pipeline.
   */
  readonly section?: string;
  /** Checks the options when the pipeline is built; report each problem on `validator` (all are thrown together). */
  validate?(validator: OptionsValidator, options: TOptions, pipeline: StrategyPipelineInfo): void;
  /** Creates the strategy once the whole pipeline has been validated. */
  create(options: TOptions, context: StrategyBuilderContext): ResilienceStrategy<unknown>;
}

/**
 * A service that configuration hands to the strategies it creates (the registry's circuit state store,
 * the limiters shared by a pipeline name). The strategy folder that needs it defines the key; the
 * registry supplies the value.
 *
 * @publicApi
 */
export class StrategyServiceKey<T> {
  /** Never set: carries the value type for the compiler. */
  declare readonly __type?: T;

  /** @param name - Names the service in error messages. */
  constructor(readonly name: string) {}
}

/** What a strategy created from configuration may ask for. @publicApi */
export interface StrategyConfigEnvironment {
  /** The service registered under `key`, or `undefined` when the caller supplies none. */
  service<S>(key: StrategyServiceKey<S>): S | undefined;
}

/**
 * How one section of a `PipelineConfig` (and the decorator of the same name, if any) maps to its
 * strategy. The predicate names of `shouldHandle` are resolved before the section sees its data.
 *
 * @publicApi
 */
export interface StrategySectionDefinition<TOptions, TConfig = unknown> {
  /** Never set: carries the section's data type (what `PipelineConfig` holds under its name) for the compiler. */
  readonly __config?: TConfig;
  /** The decorator that adds this section to a method (`Retry` for `@Retry`), if there is one. */
  readonly decorator?: string;
  /** The option that a plain number given for the section stands for (`"timeout": 2000`). */
  readonly numberOption?: string;
  /** The strategy type when it differs from the registration's (`concurrency-limiter`). */
  readonly type?: string;
  /** False for a section that cannot be an entry of `PipelineConfig.strategies` (`totalTimeout`). */
  readonly listed?: boolean;
  /** The options the section's data stands for (default: the data as it is). */
  fromConfig?(config: Record<string, unknown>, env: StrategyConfigEnvironment): TOptions;
  /**
   * Checks what only configuration can get wrong (a service the environment lacks), after the
   * registration's own `validate`; report each problem on `validator`.
   */
  validate?(validator: OptionsValidator, options: TOptions, env: StrategyConfigEnvironment): void;
  /** Creates the strategy of this section (default: the registration's `create`). */
  create?(options: TOptions, context: StrategyBuilderContext, env: StrategyConfigEnvironment): ResilienceStrategy;
  /** The section data of a method that names another pipeline's section, to share that pipeline's state. */
  sharedWith?(config: Record<string, unknown>, pipelineName: string): Record<string, unknown>;
}

/**
 * Everything the package knows about one kind of strategy, exported by its folder (its descriptor,
 * made with `defineStrategy`): its type, its options schema (from which known keys, validation,
 * configuration strings and documented defaults follow), its telemetry events, how it is created, the
 * inspection ports it offers and the configuration sections (and decorators) that add it.
 * `ResiliencePipelineBuilder.add(descriptor, options)` adds one.
 *
 * @publicApi
 */
export interface StrategyDefinition<
  TOptions extends object = object,
  TConfigs extends Record<string, unknown> = Record<string, unknown>,
> {
  /** The kind of strategy: telemetry's `strategyType` and validation paths (`strategies[0] (retry)`). */
  readonly type: string;
  /** Every option, once: known keys, rules, how configuration reads strings, documented defaults. */
  readonly options?: OptionsSchema<TOptions>;
  /** The names of the telemetry events the strategy reports. */
  readonly events: readonly (keyof ResilienceEventMap)[];
  /** The events with their severity and figures, as logs, metrics, the admin API and the dashboard read them. */
  readonly eventDescriptors?: ResilienceEventDescriptors;
  /** Checks what the schema cannot (options that depend on each other); runs after the schema's rules. */
  check?(validator: OptionsValidator, options: TOptions, pipeline: StrategyPipelineInfo): void;
  /** Checks the options when a pipeline is built; report each problem on `validator` (all are thrown together). */
  validate?(validator: OptionsValidator, options: TOptions, pipeline: StrategyPipelineInfo): void;
  /** Creates the strategy once the whole pipeline has been validated. */
  create(options: TOptions, context: StrategyBuilderContext): ResilienceStrategy;
  /** The ports the strategy offers to inspection (`circuit`, `limiter`). */
  readonly ports?: readonly (keyof StrategyPorts)[];
  /** The configuration sections that add this strategy, by section name. */
  readonly sections?: { readonly [S in keyof TConfigs]: StrategySectionDefinition<TOptions, TConfigs[S]> };
}

/**
 * A descriptor of any options and sections, for code that handles strategies generically.
 *
 * @publicApi
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any options type (function parameters are contravariant)
export type AnyStrategyDefinition = StrategyDefinition<any, any>;

/**
 * A strategy's descriptor: `StrategyDefinition` by the name it has in a strategy folder.
 *
 * @publicApi
 */
export type StrategyDescriptor<
  TOptions extends object = object,
  TConfigs extends Record<string, unknown> = Record<string, unknown>,
> = StrategyDefinition<TOptions, TConfigs>;
