import type {
  AnyStrategyDefinition,
  ResilienceStrategy,
  StrategyDefinition,
  StrategyRegistration,
} from '../strategy/resilience-strategy.interface.js';
import type { TelemetryListener } from '../telemetry/resilience-event.model.js';
import { StrategyTelemetry } from '../telemetry/strategy.telemetry.js';
import { systemTimeProvider, type TimeProvider } from '../time/time.provider.js';
import { ResilienceValidationError } from '../resilience.errors.js';
import { OptionsValidator } from '../strategy/options.validation.js';
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

/**
 * The registration factories of `builtInStrategies`, one per strategy folder (each adds its own by
 * declaration merging, beside its `add…` shortcut).
 *
 * @publicApi
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled by declaration merging
export interface BuiltInStrategies {}

/**
 * The registrations behind the built-in `add…` methods, for code that adds strategies generically. Each
 * strategy folder also exports its descriptor for `ResiliencePipelineBuilder.add`.
 *
 * @publicApi
 */
export const builtInStrategies = {} as BuiltInStrategies;

/**
 * Gives `ResiliencePipelineBuilder` a strategy folder's shortcuts (`addRetry` …) and `builtInStrategies`
 * its registration factories: the TypeScript form of Polly's extension methods. The folder declares the
 * methods' types by merging them into the builder's interface.
 *
 * @publicApi
 */
export function extendPipelineBuilder(
  shortcuts: { readonly [method: string]: (this: ResiliencePipelineBuilder<unknown>, ...args: never[]) => unknown },
  factories: { readonly [name: string]: AnyStrategyDefinition } = {},
): void {
  Object.assign(ResiliencePipelineBuilder.prototype, shortcuts);
  for (const [name, definition] of Object.entries(factories)) {
    (builtInStrategies as unknown as Record<string, unknown>)[name] = (options: object) =>
      strategyRegistration(definition as StrategyDefinition, options);
  }
}

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
    /** The strategies this build made (not those of nested pipelines, which their pipelines own). */
    const created: ResilienceStrategy<unknown>[] = [];
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
        } else if (nested._reloadable || nested._reportsExecutions) {
          // A registry's pipeline: run whatever it runs at the time of the call. A pipeline that reports
          // its own executions: report them in its place, under its name.
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
      try {
        const strategy = entry.create(entry.options, {
          timeProvider,
          random,
          telemetry: new StrategyTelemetry(source(entry.type, name), listeners),
          pipelineName: this.options.name,
          pipelineInstanceName: this.options.instanceName,
        });
        strategies.push(strategy);
        created.push(strategy);
      } catch (error) {
        // The pipeline is not built: the strategies made for it so far are disposed (their manual controls,
        // waiters and timers). A state provider a breaker took stays taken, as after any build.
        for (const strategy of created) releaseQuietly(strategy);
        throw error;
      }
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

/** Disposes a strategy of a pipeline that was not built; its failure is not the one to report. */
function releaseQuietly(strategy: ResilienceStrategy<unknown>): void {
  try {
    Promise.resolve(strategy.dispose?.()).catch(() => undefined);
  } catch {
    // the build's own error is reported instead
  }
}
