import {
  InMemoryCircuitBreakerStateStore,
  type AdaptiveThrottlingStore,
  OptionsValidator,
  ResiliencePipelineBuilder,
  ResilienceValidationError,
  systemTimeProvider,
  UnknownPipelineError,
  type CircuitBreakerManualControl,
  type CircuitBreakerStateStore,
  type OutcomePredicate,
  type RateLimiter,
  type RateLimiterStrategyOptions,
  type ResiliencePipeline,
  type SharedLimitSectionName,
  type TelemetryListener,
  type TimeProvider,
  type ValidationIssue,
} from '../../core/index.js';
import { markReloadable, replacePipelineStrategies } from '../../core/internal.js';
import { CONFIG_RULES } from '../config.messages.js';
import { coercePipelineConfig } from '../pipeline-config/config-value.coercion.js';
import { applyPipelineConfig } from '../pipeline-config/pipeline-config.builder.js';
import type { PipelineConfig, PipelineConfigData } from '../pipeline-config/pipeline-config.model.js';
import { PredicateRegistry } from '../pipeline-config/predicate.registry.js';
import { PipelineSharedState } from './pipeline-shared.state.js';
import {
  RegistryInspector,
  type CircuitInfo,
  type InspectedPipeline,
  type LimiterInfo,
} from './registry.inspection.js';

/** Options of a `ResiliencePipelineRegistry`: the clock, telemetry, predicates and circuit store its pipelines share. @publicApi */
export interface ResiliencePipelineRegistryOptions {
  /** Named pipelines as data. */
  pipelines?: Readonly<Record<string, PipelineConfigData>>;
  /** Predicates the configuration may refer to by name, besides the built-in ones. */
  predicates?: Readonly<Record<string, OutcomePredicate<unknown>>>;
  /** Where every circuit breaker of the registry keeps its state. Default: one in-memory store. */
  stateStore?: CircuitBreakerStateStore;
  /** The clock of every pipeline. Default: the system clock. */
  timeProvider?: TimeProvider;
  /** Listeners every pipeline reports its events to. */
  telemetryListeners?: readonly TelemetryListener[];
  /** Random source in [0, 1) for jitter and chaos. Default `Math.random`. */
  random?: () => number;
  /** Makes the limiter of a limit marked `distributed` (e.g. a `RedisRateLimiter`); `id` names it. */
  distributedLimiter?: (id: string, options: RateLimiterStrategyOptions) => RateLimiter;
  /**
   * Where adaptive throttling sections with `fleet` share their windows (e.g. a
   * `RedisAdaptiveThrottlingStore`). Without one, such a section fails validation unless it brings `fleet.store`.
   */
  adaptiveThrottlingStore?: AdaptiveThrottlingStore;
}

/** Configures a pipeline added by code (`getOrAddPipeline`). @publicApi */
export type ConfigurePipeline<T> = (
  builder: ResiliencePipelineBuilder<T>,
  context: { readonly name: string; readonly key: string | undefined },
) => void;

interface Entry {
  config?: PipelineConfig;
  configure?: ConfigurePipeline<unknown>;
  /**
   * By instance key; `''` is the pipeline without a key. Each is the one object handed out for its name
   * and key: a reload gives it new strategies.
   */
  instances: Map<string, ResiliencePipeline<unknown>>;
}

/**
 * Named pipelines: registered as data (or by code), validated up front, built once per name and key,
 * reloadable without losing circuit state, disposed together.
 *
 * ```ts
 * const registry = new ResiliencePipelineRegistry({ pipelines: { orders: { retry: { maxRetryAttempts: 3 } } } });
 * await registry.getPipeline('orders').execute(() => orders.list());
 * await registry.getPipeline('catalog', 'eu-west').execute(…); // one instance (and one circuit) per key
 * ```
 *
 * @publicApi
 */
export class ResiliencePipelineRegistry {
  /** The predicates configuration can name. */
  readonly predicates = new PredicateRegistry();
  /** Where every circuit breaker of the registry keeps its state. */
  readonly stateStore: CircuitBreakerStateStore;
  /** The clock of every pipeline of the registry. */
  readonly timeProvider: TimeProvider;
  private readonly entries = new Map<string, Entry>();
  /** Circuit controls and limiters shared by name. */
  private readonly shared: PipelineSharedState;
  /** Circuits and limiters of every pipeline the registry hands out or built for other code. */
  private readonly inspector: RegistryInspector;
  /** Pipelines that failed validation in a collecting `addPipelines`, with their problems. */
  private readonly invalid = new Map<string, readonly ValidationIssue[]>();
  private disposed = false;
  private disposal: Promise<void> | undefined;

  constructor(private readonly options: ResiliencePipelineRegistryOptions = {}) {
    this.stateStore = options.stateStore ?? new InMemoryCircuitBreakerStateStore();
    this.timeProvider = options.timeProvider ?? systemTimeProvider;
    this.shared = new PipelineSharedState(
      this.stateStore,
      this.timeProvider,
      options.distributedLimiter,
      options.adaptiveThrottlingStore,
    );
    this.inspector = new RegistryInspector(
      () => this.registeredInstances(),
      () => this.shared.sharedLimiters(),
      this.timeProvider,
    );
    for (const [name, predicate] of Object.entries(options.predicates ?? {})) this.predicates.register(name, predicate);
    if (options.pipelines !== undefined && options.pipelines !== null) this.addPipelines(options.pipelines);
  }

  /** The names of every registered pipeline. */
  get pipelineNames(): string[] {
    return [...this.entries.keys()].sort();
  }

  /**
   * Registers pipelines given as data. Every pipeline is validated now; one `ResilienceValidationError`
   * lists every problem of every pipeline, and nothing is registered if any is invalid.
   *
   * With `collect`, problems are added to it instead of thrown (so a caller can report them together
   * with others): the valid pipelines are registered, and asking for an invalid one throws its problems.
   */
  addPipelines(pipelines: Readonly<Record<string, PipelineConfigData>>, collect?: OptionsValidator): void {
    const v = new OptionsValidator('');
    if (typeof pipelines !== 'object' || pipelines === null) {
      v.add('pipelines', pipelines, CONFIG_RULES.pipelinesObject);
      if (collect) collect.addIssues(v.problems);
      else v.throwIfInvalid('Invalid resilience configuration');
      return;
    }
    // Configuration as data: "2s", "3" and "true" become the values they stand for, before validation.
    const configs = Object.entries(pipelines).map(([name, data]) => [name, coercePipelineConfig(data)] as const);
    const failed = new Map<string, readonly ValidationIssue[]>();
    for (const [name, config] of configs) {
      const own = new OptionsValidator('');
      if (this.entries.has(name) || this.invalid.has(name))
        own.add(`pipelines.${name}`, '(exists)', CONFIG_RULES.alreadyRegistered);
      else this.checkConfig(name, config, own);
      if (!own.isValid) failed.set(name, own.problems);
      v.addIssues(own.problems);
    }
    if (!collect) v.throwIfInvalid('Invalid resilience configuration');
    collect?.addIssues(v.problems);
    for (const [name, config] of configs) {
      const issues = failed.get(name);
      if (issues && !this.entries.has(name)) this.invalid.set(name, issues);
      else if (!issues) this.entries.set(name, { config, instances: new Map() });
    }
  }

  /** True for a pipeline that a collecting `addPipelines` found invalid. */
  isInvalidPipeline(name: string): boolean {
    return this.invalid.has(name);
  }

  /** The names of every pipeline given, valid or not (for messages that list what exists). */
  get declaredPipelineNames(): string[] {
    return [...this.entries.keys(), ...this.invalid.keys()].sort();
  }

  /**
   * Every name `circuits()`, `circuitState()` and `isolateCircuit()` can answer to: the pipelines given
   * (valid or not) and those built with `createBuilder` that are still in use (decorated methods,
   * `Class.method`). For validating names that options give.
   */
  get knownPipelineNames(): string[] {
    return [...new Set([...this.declaredPipelineNames, ...this.inspector.trackedNames()])].sort();
  }

  /** The pipeline registered under `name` (and its instance for `key`). Throws `UnknownPipelineError`. */
  getPipeline<T = unknown>(name: string, key?: string): ResiliencePipeline<T> {
    const pipeline = this.tryGetPipeline<T>(name, key);
    if (!pipeline) throw new UnknownPipelineError(name, this.pipelineNames);
    return pipeline;
  }

  /** Like `getPipeline`, but `undefined` for an unknown name. */
  tryGetPipeline<T = unknown>(name: string, key?: string): ResiliencePipeline<T> | undefined {
    this.assertNotDisposed();
    const invalid = this.invalid.get(name);
    if (invalid) throw new ResilienceValidationError(invalid, `Invalid configuration for pipeline "${name}"`);
    const entry = this.entries.get(name);
    if (!entry) return undefined;
    return this.instance(name, entry, key);
  }

  /** The pipeline registered under `name`, or one configured now by `configure` and registered. */
  getOrAddPipeline<T = unknown>(name: string, configure: ConfigurePipeline<T>, key?: string): ResiliencePipeline<T> {
    this.assertNotDisposed();
    let entry = this.entries.get(name);
    if (!entry) {
      entry = { configure: configure as ConfigurePipeline<unknown>, instances: new Map() };
      const first = markReloadable(this.buildEntry(name, entry, key)); // validates before registering
      this.entries.set(name, entry);
      entry.instances.set(key ?? '', first);
      return first;
    }
    return this.instance(name, entry, key);
  }

  /** The configuration a pipeline was registered with, if it came from data. */
  getPipelineConfig(name: string): PipelineConfig | undefined {
    return this.entries.get(name)?.config;
  }

  /**
   * Replaces a pipeline's configuration. The new one is validated first (an invalid one changes
   * nothing); every instance handed out so far switches to it; circuit breakers keep their state because
   * they keep their store and key.
   */
  async reload(name: string, data: PipelineConfigData): Promise<void> {
    const config = coercePipelineConfig(data);
    const entry = this.entries.get(name);
    if (!entry) throw new UnknownPipelineError(name, this.pipelineNames);
    // Stryker disable next-line StringLiteral: equivalent — this validator only gathers issues made elsewhere (addIssues); its prefix is never applied
    const v = new OptionsValidator('');
    const rebuilt = new Map<string, ResiliencePipeline<unknown> | undefined>();
    try {
      // A pipeline that could not be built leaves its problems in `v`, thrown before any is used.
      for (const key of entry.instances.keys())
        rebuilt.set(key, this.buildFromConfig(name, key || undefined, config, v));
      if (entry.instances.size === 0) this.checkConfig(name, config, v);
      v.throwIfInvalid(`Invalid configuration for pipeline "${name}"`);
    } catch (error) {
      // Nothing changes: what was built for the other instances is released (the reload's error is the one
      // to report, whatever a disposal does).
      await Promise.allSettled([...rebuilt.values()].map((pipeline) => pipeline?.dispose() ?? Promise.resolve()));
      throw error;
    }
    entry.config = config;
    entry.configure = undefined;
    const old: ResiliencePipeline<unknown>[] = [];
    for (const [key, handle] of entry.instances) old.push(replacePipelineStrategies(handle, rebuilt.get(key)!));
    await Promise.all(old.map((p) => p.dispose()));
  }

  /**
   * Isolates and closes the circuit of a named pipeline by hand: every instance and every decorated
   * method naming the pipeline's circuit breaker is driven by it.
   */
  circuitControl(name: string): CircuitBreakerManualControl {
    return this.shared.circuitControl(name);
  }

  /**
   * The limiter a limit section of a named pipeline shares: one per pipeline name, key and section, so
   * every instance for that key and every method naming the pipeline draw from the same permits.
   */
  sharedLimiter(
    name: string,
    key: string | undefined,
    section: SharedLimitSectionName,
    options: RateLimiterStrategyOptions,
  ): RateLimiter {
    return this.shared.sharedLimiter(name, key, section, options);
  }

  /**
   * Every circuit of the registry's pipelines (and of decorated methods), read from the state store: on
   * a shared store (Redis) this is the fleet's view. One entry per circuit, however many pipelines
   * share it.
   */
  circuits(): Promise<CircuitInfo[]> {
    return this.inspector.circuits();
  }

  /**
   * The circuit of the named pipeline (and instance `key`), or undefined if it has no circuit breaker
   * or that instance was never used.
   */
  circuitState(name: string, key?: string): Promise<CircuitInfo | undefined> {
    return this.inspector.circuitState(name, key);
  }

  /**
   * Isolates the circuits of the named pipeline (or decorated method) by hand: with `key`, only that
   * instance's; without, every instance's, and instances built later start isolated. Returns how many
   * circuits it drove (0: the name has no circuit breaker).
   */
  async isolateCircuit(name: string, key?: string): Promise<number> {
    return this.driveCircuits(name, key, 'isolate');
  }

  /** Closes (and resets) what `isolateCircuit` isolated, or an open circuit. Returns how many it drove. */
  async closeCircuit(name: string, key?: string): Promise<number> {
    return this.driveCircuits(name, key, 'close');
  }

  /** Permits in use and queue lengths of every limiter of the registry's pipelines. */
  limiterStatistics(): LimiterInfo[] {
    return this.inspector.limiterStatistics();
  }

  /** Registers a predicate that configuration can name. */
  registerPredicate(name: string, predicate: OutcomePredicate<unknown>): this {
    this.predicates.register(name, predicate);
    return this;
  }

  /**
   * Disposes every pipeline built so far and the shared limiters. The registry cannot be used afterwards.
   * Calling it again returns the same promise: it settles when everything is disposed, and disposes nothing twice.
   */
  dispose(): Promise<void> {
    return (this.disposal ??= this.disposeAll());
  }

  private async disposeAll(): Promise<void> {
    this.disposed = true;
    const all = [...this.entries.values()].flatMap((e) => [...e.instances.values()]);
    this.entries.clear();
    await Promise.all(all.map((p) => p.dispose()));
    this.shared.dispose();
    this.inspector.clear();
  }

  /**
   * Adds the strategies `config` describes to `builder` the way this registry builds its own pipelines:
   * predicate names resolved against the registry, circuit breakers on its state store. With
   * `sharedWith`, the strategies share that named pipeline's state — its circuit, the circuit control
   * and the limiters — as a method naming one of its sections does. Problems with the configuration's
   * shape go to `issues`; problems with strategy options are reported by `builder.build()`.
   */
  applyConfig(
    builder: ResiliencePipelineBuilder<unknown>,
    config: PipelineConfig,
    issues: OptionsValidator,
    options: { readonly sharedWith?: string } = {},
  ): void {
    const name = options.sharedWith;
    applyPipelineConfig(
      builder,
      config,
      { predicates: this.predicates, services: this.shared.services(name, undefined), sharedWith: name },
      issues,
    );
  }

  /**
   * A builder with the registry's clock, telemetry and naming. The pipeline it builds is known to
   * `circuits()` and `limiterStatistics()` under `name`.
   */
  createBuilder<T>(name: string, key?: string, validationPath?: string): ResiliencePipelineBuilder<T> {
    const builder = this.newBuilder<T>(name, key, validationPath);
    const build = builder.build.bind(builder);
    builder.build = () => {
      const pipeline = build();
      if (!this.disposed) this.inspector.track(name, key, pipeline);
      return pipeline;
    };
    return builder;
  }

  private async driveCircuits(name: string, key: string | undefined, action: 'isolate' | 'close'): Promise<number> {
    const breakers = this.inspector.breakers(name, key);
    if (key === undefined && this.entries.has(name)) await this.circuitControl(name)[action]();
    await Promise.all(breakers.map((breaker) => breaker[action]()));
    return breakers.length;
  }

  private *registeredInstances(): Iterable<InspectedPipeline> {
    for (const [name, entry] of this.entries) {
      for (const [key, pipeline] of entry.instances) yield { name, key: key || undefined, pipeline };
    }
  }

  private newBuilder<T>(name: string, key?: string, validationPath?: string): ResiliencePipelineBuilder<T> {
    return new ResiliencePipelineBuilder<T>({
      name,
      instanceName: key,
      timeProvider: this.timeProvider,
      telemetryListeners: this.options.telemetryListeners,
      random: this.options.random,
      validationPath,
    });
  }

  private assertNotDisposed(): void {
    if (this.disposed) throw new Error('The resilience pipeline registry has been disposed.');
  }

  private instance(name: string, entry: Entry, key: string | undefined): ResiliencePipeline<unknown> {
    let pipeline = entry.instances.get(key ?? '');
    if (!pipeline) {
      pipeline = markReloadable(this.buildEntry(name, entry, key));
      entry.instances.set(key ?? '', pipeline);
    }
    return pipeline;
  }

  private buildEntry(name: string, entry: Entry, given: string | undefined): ResiliencePipeline<unknown> {
    const key = given || undefined; // '' is the pipeline without a key
    if (entry.config) {
      // Stryker disable next-line StringLiteral: equivalent — this validator only gathers issues made elsewhere (addIssues); its prefix is never applied
      const v = new OptionsValidator('');
      const pipeline = this.buildFromConfig(name, key, entry.config, v);
      // Stryker disable next-line StringLiteral: equivalent — unreachable: the configuration was built without problems when it was registered or reloaded, and no rule depends on the key
      v.throwIfInvalid(`Invalid configuration for pipeline "${name}"`);
      return pipeline!;
    }
    const builder = this.newBuilder<unknown>(name, key);
    entry.configure!(builder, { name, key });
    return builder.build();
  }

  /** Finds a configuration's problems (into `v`) by building it once, then releases what it built. */
  private checkConfig(name: string, config: PipelineConfig, v: OptionsValidator): void {
    const probe = this.buildFromConfig(name, undefined, config, v);
    probe?.dispose().catch(() => undefined);
  }

  private buildFromConfig(
    name: string,
    key: string | undefined,
    config: PipelineConfig,
    v: OptionsValidator,
  ): ResiliencePipeline<unknown> | undefined {
    const path = `pipelines.${name}`;
    const builder = this.newBuilder<unknown>(name, key, path);
    const configIssues = new OptionsValidator(path);
    applyPipelineConfig(
      builder,
      config,
      { predicates: this.predicates, services: this.shared.services(name, key) },
      configIssues,
    );
    v.addIssues(configIssues.problems);
    try {
      // Built even when the configuration had problems (an unknown predicate name): `v` holds them, and
      // every caller throws or records them before using a pipeline.
      return builder.build();
    } catch (error) {
      if (error instanceof ResilienceValidationError) {
        v.addIssues(error.issues);
        return undefined;
      }
      throw error;
    }
  }
}
