import {
  fallbackRegistration,
  OptionsValidator,
  ResilienceValidationError,
  strategyRegistration,
  type ResiliencePipeline,
  type ResiliencePipelineBuilder,
} from '../../core/index.js';
import {
  strategyCatalog,
  type PipelineConfig,
  type ResiliencePipelineRegistry,
  type StrategySection,
} from '../../config/index.js';
import type { FallbackDecoratorOptions, SectionSpec } from '../decorators/resilience.decorators.js';
import type { ResilienceMethodMetadata, DecoratorSectionName } from '../decorators/resilience-method.metadata.js';
import {
  createMethodBinding,
  METHOD_INVOCATION,
  type ResilienceMethodBinding,
} from '../execution/resilience-method.binding.js';
import { NEST_RULES } from '../resilience.messages.js';

/** A method's composed pipeline and how it reads in logs. @internal */
export interface MethodPipelinePlan {
  readonly pipeline: ResiliencePipeline<unknown>;
  readonly description: string;
  readonly binding: ResilienceMethodBinding;
}

/** What planning one decorator works on. */
interface PlanStep {
  readonly meta: ResilienceMethodMetadata;
  readonly instance: object;
  readonly registry: ResiliencePipelineRegistry;
  /** The method's own pipeline, made when a planner first adds to it. */
  readonly builder: ResiliencePipelineBuilder<unknown>;
  /** Set when this is the method's only strategy decorator. */
  readonly alone: boolean;
  readonly issues: OptionsValidator;
  readonly section: StrategySection;
  /** `@Retry`, as validation paths name it. */
  readonly decorator: string;
  /** Set when the method's pipeline must record each call's instance and arguments. */
  recordInvocation: boolean;
  /** Set when the decorator names a pipeline that is itself invalid (reported once, with the pipeline). */
  namesInvalidPipeline: boolean;
  /** `@UseResiliencePipeline`'s pipeline, the registry's own object. */
  namedPipeline?: ResiliencePipeline<unknown>;
}

/** Adds one decorator's strategy; returns how it reads in the description, or nothing when it is invalid. */
type DecoratorPlanner = (spec: unknown, step: PlanStep) => string | undefined;

/** Decorators that are more than a configuration section; every other decorator is one. */
const PLANNERS: Partial<Record<DecoratorSectionName, DecoratorPlanner>> = {
  fallback: planFallback,
  pipeline: planNamedPipeline,
};

/**
 * Composes the pipeline of one decorated method from its decorators, in the order of
 * `strategyCatalog()`, resolving named sections from the registry. Problems go to `v` (the explorer
 * reports them all at once).
 *
 * @internal
 */
export function planMethodPipeline(
  meta: ResilienceMethodMetadata,
  instance: object,
  registry: ResiliencePipelineRegistry,
  /** From the declared return type; `undefined` when none is declared (then the returned value decides). */
  returnsObservable: boolean | undefined,
  v: OptionsValidator,
): MethodPipelinePlan | undefined {
  const where = `${meta.className}.${meta.methodName}`;
  // Made on first use: a method whose only decorator is `@UseResiliencePipeline` needs none.
  let builder: ResiliencePipelineBuilder<unknown> | undefined;
  const ownBuilder = (): ResiliencePipelineBuilder<unknown> =>
    (builder ??= registry.createBuilder<unknown>(where, undefined, where));
  const sections = strategyCatalog().filter((s) => meta.sections[s.name] !== undefined && s.decorator !== undefined);
  const issues = new OptionsValidator(where);
  const parts: string[] = [];
  let recordInvocation = false;
  let namesInvalidPipeline = false;
  let namedPipeline: ResiliencePipeline<unknown> | undefined;

  for (const section of sections) {
    const spec = meta.sections[section.name];
    const step: PlanStep = {
      meta,
      instance,
      registry,
      get builder() {
        return ownBuilder();
      },
      alone: sections.length === 1,
      issues,
      section,
      decorator: `@${section.decorator}`,
      recordInvocation: false,
      namesInvalidPipeline: false,
    };
    const part = (PLANNERS[section.name as DecoratorSectionName] ?? planSection)(spec, step);
    if (part !== undefined) parts.push(part);
    recordInvocation ||= step.recordInvocation;
    namesInvalidPipeline ||= step.namesInvalidPipeline;
    namedPipeline ??= step.namedPipeline;
  }

  v.addIssues(issues.problems);
  let pipeline: ResiliencePipeline<unknown>;
  if (namedPipeline !== undefined && sections.length === 1) {
    // `@UseResiliencePipeline` alone: the method runs the named pipeline itself, so its calls are that
    // pipeline's in telemetry, inspection and health (the method is the calls' operation key).
    pipeline = namedPipeline;
  } else {
    try {
      pipeline = ownBuilder().build();
    } catch (error) {
      if (error instanceof ResilienceValidationError) {
        v.addIssues(error.issues);
        return undefined;
      }
      throw error;
    }
  }
  if (!issues.isValid || namesInvalidPipeline) return undefined;
  const binding = createMethodBinding(
    meta.original,
    pipeline,
    where,
    recordInvocation,
    returnsObservable,
    meta.criticality,
  );
  return { pipeline, description: `${where}: ${[...parts, meta.methodName].join(' → ')}`, binding };
}

/** `@Fallback`: a method of the same class (with the call's arguments, or the error alone) or a value. */
function planFallback(spec: unknown, step: PlanStep): string | undefined {
  const { meta, instance, registry, builder, issues, decorator } = step;
  const options = spec as FallbackDecoratorOptions;
  const shouldHandle = registry.predicates.resolve(options.shouldHandle, issues, `${decorator}.shouldHandle`);
  if (options.method !== undefined) {
    const fallback = (instance as Record<string, unknown>)[options.method];
    if (typeof fallback !== 'function') {
      issues.add(
        decorator,
        options.method,
        NEST_RULES.notAMethod(meta.className, options.method, methodNamesOf(instance)),
      );
      return undefined;
    }
    const arity = meta.original.length;
    if (fallback.length !== arity + 1 && fallback.length !== 1) {
      issues.add(decorator, options.method, NEST_RULES.fallbackArity(arity, meta.methodName, fallback.length));
      return undefined;
    }
    const errorOnly = fallback.length === 1 && arity !== 0;
    step.recordInvocation = true;
    builder.addStrategy(
      strategyRegistration(
        fallbackRegistration,
        {
          shouldHandle,
          fallbackAction: ({ outcome, context }) => {
            const { self, args } = context.properties.get(METHOD_INVOCATION)!;
            const error = outcome.ok ? undefined : outcome.error;
            return (fallback as (...a: unknown[]) => unknown).apply(self, errorOnly ? [error] : [...args, error]);
          },
        },
        decorator,
      ),
    );
    return `Fallback(${options.method})`;
  }
  if ('value' in options) {
    builder.addStrategy(
      strategyRegistration(fallbackRegistration, { fallbackValue: options.value, shouldHandle }, decorator),
    );
    return 'Fallback(value)';
  }
  issues.add(decorator, options, NEST_RULES.fallbackNeedsTarget);
  return undefined;
}

/** `@UseResiliencePipeline` on a method: the whole named pipeline, nested at its place. */
function planNamedPipeline(spec: unknown, step: PlanStep): string | undefined {
  const { registry } = step;
  const { name } = spec as { name: string };
  const named = registry.isInvalidPipeline(name) ? undefined : registry.tryGetPipeline(name);
  if (!named) {
    unknownPipeline(name, step);
    return undefined;
  }
  // The registry's own pipeline object, so the method follows its reloads and shares its state and name
  // (alone, the method runs it directly: see `planMethodPipeline`).
  if (!step.alone) step.builder.addPipeline(named);
  step.namedPipeline = named;
  return `Pipeline(${name})`;
}

/**
 * A decorator that stands for a configuration section: inline options, or the section of a named
 * pipeline — whose strategies the method then runs: the pipeline's own circuit, limiters and options, under
 * the pipeline's name in telemetry, inspection, health and error bodies, following its reloads.
 */
function planSection(spec: unknown, step: PlanStep): string | undefined {
  const { registry, builder, issues, decorator, section } = step;
  const sectionSpec = spec as SectionSpec<object>;
  const name = section.name as keyof PipelineConfig;
  if (!('name' in sectionSpec)) {
    registry.applyConfig(builder, { [name]: sectionSpec.options }, issues);
    return `${section.decorator}(inline)`;
  }
  if (!registry.pipelineNames.includes(sectionSpec.name)) {
    unknownPipeline(sectionSpec.name, step);
    return undefined;
  }
  const value = registry.getPipelineConfig(sectionSpec.name)?.[name];
  if (value === undefined) {
    issues.add(decorator, sectionSpec.name, NEST_RULES.missingSection(name));
    return undefined;
  }
  const named = registry.getPipeline(sectionSpec.name);
  if (named.sectionAsStrategy(name) === undefined) {
    issues.add(decorator, sectionSpec.name, NEST_RULES.missingSection(name));
    return undefined;
  }
  builder.addPipeline(named, { section: name });
  return `${section.decorator}(${sectionSpec.name})`;
}

/** A decorator names no valid pipeline: an issue, unless the pipeline exists and is itself invalid. */
function unknownPipeline(name: string, step: PlanStep): void {
  const { registry, issues, decorator } = step;
  if (registry.isInvalidPipeline(name)) step.namesInvalidPipeline = true;
  else issues.add(decorator, name, NEST_RULES.unknownPipeline(name, registry.declaredPipelineNames));
}

/** The names of the methods an instance has (its own function properties and its classes' methods). */
function methodNamesOf(instance: object): string[] {
  const names = new Set<string>();
  for (let o: object | null = instance; o && o !== Object.prototype; o = Object.getPrototypeOf(o) as object | null) {
    for (const key of Object.getOwnPropertyNames(o)) {
      if (key === 'constructor') continue;
      const descriptor = Object.getOwnPropertyDescriptor(o, key);
      if (typeof descriptor?.value === 'function') names.add(key);
    }
  }
  return [...names];
}
