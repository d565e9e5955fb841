import {
  applyPipelineConfig,
  builtInStrategies,
  defaultCircuitKey,
  OptionsValidator,
  ResilienceContext,
  ResiliencePropertyKey,
  ResilienceValidationError,
  type PipelineConfig,
  type ResiliencePipeline,
  type ResiliencePipelineRegistry,
} from '../core/internal.js';
import type { FallbackDecoratorOptions, SectionSpec } from './decorators/resilience.decorators.js';
import {
  RESILIENCE_DECORATOR_ORDER,
  type ResilienceMethodBinding,
  type ResilienceMethodMetadata,
} from './decorators/resilience-method.metadata.js';
import { collectObservable, isObservable, pipelineObservable } from './observable.util.js';
import { runInResilienceContext } from './resilience-context.storage.js';
import { ResponseCancellationScope } from './response-cancellation.scope.js';

interface Invocation {
  readonly self: unknown;
  readonly args: unknown[];
}

const INVOCATION = new ResiliencePropertyKey<Invocation>('nest-resilience.invocation');

const DECORATOR_NAMES = {
  fallback: 'Fallback',
  pipeline: 'UseResiliencePipeline',
  rateLimiter: 'RateLimit',
  concurrencyLimiter: 'ConcurrencyLimit',
  hedging: 'Hedging',
  retry: 'Retry',
  circuitBreaker: 'CircuitBreaker',
  timeout: 'Timeout',
} as const;

/** A method's composed pipeline and how it reads in logs. @internal */
export interface MethodPipelinePlan {
  readonly pipeline: ResiliencePipeline<unknown>;
  readonly description: string;
  readonly binding: ResilienceMethodBinding;
}

/**
 * Composes the pipeline of one decorated method from its decorators, in `RESILIENCE_DECORATOR_ORDER`,
 * resolving named sections from the registry. Problems go to `v` (the explorer reports them all at once).
 *
 * @internal
 */
export function planMethodPipeline(
  meta: ResilienceMethodMetadata,
  instance: object,
  registry: ResiliencePipelineRegistry,
  returnsObservable: boolean,
  v: OptionsValidator,
): MethodPipelinePlan | undefined {
  const where = `${meta.className}.${meta.methodName}`;
  const builder = registry.createBuilder<unknown>(where, undefined, where);
  const issues = new OptionsValidator(where);
  const parts: string[] = [];
  let needsInvocation = false;

  for (const section of RESILIENCE_DECORATOR_ORDER) {
    const spec = meta.sections[section];
    if (spec === undefined) continue;
    const decorator = `@${DECORATOR_NAMES[section]}`;
    switch (section) {
      case 'fallback': {
        const options = spec as FallbackDecoratorOptions;
        const shouldHandle = registry.predicates.resolve(options.shouldHandle, issues, `${decorator}.shouldHandle`);
        if (options.method !== undefined) {
          const fallback = (instance as Record<string, unknown>)[options.method];
          if (typeof fallback !== 'function') {
            issues.add(decorator, options.method, `is not a method of ${meta.className}`);
            break;
          }
          const arity = meta.original.length;
          if (fallback.length !== arity + 1 && fallback.length !== 1) {
            issues.add(
              decorator,
              options.method,
              `must take the ${arity} argument(s) of ${meta.methodName} plus the error, or the error alone; it takes ${fallback.length}`,
            );
            break;
          }
          const errorOnly = fallback.length === 1 && arity !== 0;
          needsInvocation = true;
          builder.addStrategy({
            ...builtInStrategies.fallback({
              shouldHandle,
              fallbackAction: ({ outcome, context }) => {
                const { self, args } = context.properties.get(INVOCATION)!;
                const error = outcome.ok ? undefined : outcome.error;
                return (fallback as (...a: unknown[]) => unknown).apply(self, errorOnly ? [error] : [...args, error]);
              },
            }),
            label: decorator,
          });
          parts.push(`Fallback(${options.method})`);
        } else if ('value' in options) {
          builder.addStrategy({
            ...builtInStrategies.fallback({ fallbackValue: options.value, shouldHandle }),
            label: decorator,
          });
          parts.push('Fallback(value)');
        } else {
          issues.add(decorator, options, 'needs a method name or a value');
        }
        break;
      }
      case 'pipeline': {
        const { name } = spec as { name: string };
        const named = registry.tryGetPipeline(name);
        if (!named) {
          issues.add(
            decorator,
            name,
            `is not a registered pipeline (known: ${registry.pipelineNames.join(', ') || 'none'})`,
          );
          break;
        }
        builder.addStrategy({
          type: 'pipeline',
          options: {},
          label: decorator,
          create: () => ({ execute: (next, context) => named.execute((ctx) => next(ctx), context) }),
        });
        parts.push(`Pipeline(${name})`);
        break;
      }
      default: {
        const sectionSpec = spec as SectionSpec<object>;
        let value: PipelineConfig[typeof section];
        let label = 'inline';
        if ('name' in sectionSpec) {
          label = sectionSpec.name;
          const config = registry.getPipelineConfig(sectionSpec.name);
          if (!registry.pipelineNames.includes(sectionSpec.name)) {
            issues.add(
              decorator,
              sectionSpec.name,
              `is not a registered pipeline (known: ${registry.pipelineNames.join(', ') || 'none'})`,
            );
            break;
          }
          value = config?.[section];
          if (value === undefined) {
            issues.add(decorator, sectionSpec.name, `names a pipeline without a "${section}" section`);
            break;
          }
          if (section === 'circuitBreaker') {
            // Every method naming this pipeline shares one circuit with the pipeline itself.
            const cb = value as NonNullable<PipelineConfig['circuitBreaker']>;
            value = { ...cb, circuitKey: cb.circuitKey ?? defaultCircuitKey(sectionSpec.name, undefined, cb.name) };
          }
        } else {
          value = sectionSpec.options;
        }
        applyPipelineConfig(
          builder,
          { [section]: value },
          {
            predicates: registry.predicates,
            stateStore: registry.stateStore,
            circuitControl: 'name' in sectionSpec ? registry.circuitControl(sectionSpec.name) : undefined,
            sharedLimiter:
              'name' in sectionSpec
                ? (limitSection, options) => registry.sharedLimiter(sectionSpec.name, undefined, limitSection, options)
                : undefined,
          },
          issues,
        );
        parts.push(`${DECORATOR_NAMES[section]}(${label})`);
      }
    }
  }

  v.addIssues(issues.problems);
  let pipeline: ResiliencePipeline<unknown>;
  try {
    pipeline = builder.build();
  } catch (error) {
    if (error instanceof ResilienceValidationError) {
      v.addIssues(error.issues);
      return undefined;
    }
    throw error;
  }
  if (!issues.isValid) return undefined;
  const binding = createBinding(meta, pipeline, where, needsInvocation, returnsObservable);
  return { pipeline, description: `${where}: ${[...parts, meta.methodName].join(' → ')}`, binding };
}

function createBinding(
  meta: ResilienceMethodMetadata,
  pipeline: ResiliencePipeline<unknown>,
  operationKey: string,
  needsInvocation: boolean,
  returnsObservable: boolean,
): ResilienceMethodBinding {
  const original = meta.original;
  const attempt = (self: unknown, args: unknown[]) => (ctx: ResilienceContext) =>
    runInResilienceContext(ctx, () => {
      const result = original.apply(self, args);
      return isObservable(result) ? collectObservable(result, ctx.signal) : result;
    });

  const run = (self: unknown, args: unknown[], scope: ResponseCancellationScope | undefined): Promise<unknown> => {
    const context = new ResilienceContext({ operationKey });
    if (scope) context._scope = scope;
    if (needsInvocation) context.properties.set(INVOCATION, { self, args });
    return pipeline.execute(attempt(self, args), context);
  };

  if (returnsObservable) {
    return {
      invoke: (self, args, link) =>
        pipelineObservable(link?.response, (scope) => run(self, args, scope) as Promise<unknown[]>),
    };
  }
  return {
    invoke: (self, args, link) =>
      run(self, args, link?.response ? new ResponseCancellationScope(link.response) : undefined),
  };
}
