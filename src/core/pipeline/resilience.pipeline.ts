import {
  ResilienceContext,
  type ResilienceCallback,
  type ResilienceContextOptions,
} from '../context/resilience.context.js';
import { outcomeFromError, outcomeFromValue, type Outcome } from '../outcome/outcome.model.js';
import type { StrategyTelemetry } from '../telemetry/strategy.telemetry.js';
import { PipelineTelemetryStrategy } from './pipeline-telemetry.strategy.js';
import { LinkedCancellationScope } from '../context/cancellation.scope.js';
import { DeadlineExceededError } from '../resilience.errors.js';
import { isCancellation } from '../outcome/cancellation.rule.js';
import { systemTimeProvider, type TimeProvider } from '../time/time.provider.js';
import { MAX_TIMER_DELAY } from '../strategy/options.validation.js';
import { invokeCallback } from './callback.invoker.js';
import { isInlineStrategy, type InlineStrategy } from '../strategy/inline-strategy.interface.js';
import { inlineHead, MAX_INLINE_RUN } from './inline.runner.js';
import type { ResilienceStrategy, StrategyNext, StrategyPorts } from '../strategy/resilience-strategy.interface.js';

/** @internal */
export interface PipelineComponents {
  readonly strategies: readonly ResilienceStrategy<unknown>[];
  /** What each of `strategies` is, in the same order: a nested pipeline describes itself when asked. */
  readonly descriptions: readonly StrategyDescriptionSource[];
  /** The configuration section each of `strategies` came from (`retry`, `circuitBreaker`…), if any. */
  readonly sections?: readonly (string | undefined)[];
  readonly telemetry: StrategyTelemetry;
  readonly timeProvider: TimeProvider;
}

/**
 * The options each built strategy was given, by its description (the object `describe()` returns), for
 * `getPipelineDescriptor` of `nest-resilience/testing`. Kept apart so `describe()` stays small and
 * serialisable. @internal
 */
const STRATEGY_OPTIONS = new WeakMap<ResilienceStrategyDescription, unknown>();

/** Records the options of the strategy `description` describes. @internal */
export function recordStrategyOptions(description: ResilienceStrategyDescription, options: unknown): void {
  STRATEGY_OPTIONS.set(description, options);
}

/** The options the strategy `description` describes was built with, if a builder recorded them. @internal */
export function strategyOptionsOf(description: ResilienceStrategyDescription): unknown {
  return STRATEGY_OPTIONS.get(description);
}

/** True for a pipeline a registry hands out (its reloads replace its strategies). @internal */
export function isReloadablePipeline(pipeline: ResiliencePipeline<never>): boolean {
  return pipeline._reloadable;
}

/** A strategy's description, or a nested pipeline's strategies, read when the pipeline is described. @internal */
export type StrategyDescriptionSource =
  ResilienceStrategyDescription | { readonly describe: () => readonly ResilienceStrategyDescription[] };

/** One strategy of a pipeline, as telemetry names it. */
export interface ResilienceStrategyDescription {
  /** The kind of strategy, e.g. `retry` or `circuit-breaker` (`custom` for a strategy added without a type). */
  readonly type: string;
  /** The strategy's `name` option, when it was given one. */
  readonly name: string | undefined;
}

/** What a pipeline runs: its components and the chain built from them. Replaced whole by a reload. */
interface PipelineCore {
  readonly components: PipelineComponents | undefined;
  /**
   * The chain: the strategies, and in front of them the pipeline's own events when some listener wants
   * `PipelineExecuting` or `PipelineExecuted` (`PipelineTelemetryStrategy`).
   */
  readonly head: StrategyNext<unknown>;
  /** The pipeline's own events, when some listener wants them; also reported when it runs nested. */
  readonly reporter: PipelineTelemetryStrategy | undefined;
}

/**
 * An immutable, reusable chain of strategies. Build one with `ResiliencePipelineBuilder` and share it:
 * strategies that keep state (a circuit breaker, a rate limiter) keep it across calls.
 *
 * A pipeline handed out by a `ResiliencePipelineRegistry` is the same object for the life of the
 * registry: a reload gives it new strategies, which calls started afterwards run; a call in flight
 * finishes with the strategies it started with.
 *
 * @publicApi
 */
export class ResiliencePipeline<T = unknown> {
  /** A pipeline with no strategies: executes the callback as it is. */
  static readonly empty: ResiliencePipeline<unknown> = new ResiliencePipeline<unknown>(undefined);

  private core: PipelineCore;
  private nested: ResilienceStrategy<unknown> | undefined;
  /** Set by a registry on the pipelines it hands out: reloads replace their strategies. */
  private reloadable = false;

  /** @internal Use `ResiliencePipelineBuilder`. */
  constructor(components: PipelineComponents | undefined) {
    this.core = createCore(components);
  }

  /** @internal The strategies running now (a reload replaces them). */
  get _components(): PipelineComponents | undefined {
    return this.core.components;
  }

  /** @internal True for a pipeline whose strategies a registry may replace (see `_adopt`). */
  get _reloadable(): boolean {
    return this.reloadable;
  }

  /** @internal Marks a pipeline a registry hands out: its reloads replace its strategies. */
  _markReloadable(): this {
    this.reloadable = true;
    return this;
  }

  /**
   * @internal Makes this pipeline run `next`'s strategies from now on (a registry's reload). Returns a
   * pipeline holding the strategies it ran until now, to be disposed once the reload is done.
   */
  _adopt(next: ResiliencePipeline<T>): ResiliencePipeline<T> {
    const previous = new ResiliencePipeline<T>(undefined);
    previous.core = this.core;
    this.core = next.core;
    return previous;
  }

  /**
   * Runs `callback` through the pipeline and returns its result, or throws the error of the final
   * outcome. `context` is a `ResilienceContext` to reuse, or options to create one (signal, operation key).
   * `state` is handed to every attempt of `callback` as its second argument (Polly's state overload),
   * so one function can serve every call without a closure per call.
   */
  execute<R extends T = T, S = void>(
    callback: ResilienceCallback<R, S>,
    context?: ResilienceContext | ResilienceContextOptions,
    state?: S,
  ): Promise<R> {
    const core = this.core;
    let ctx: ResilienceContext;
    if (context instanceof ResilienceContext) {
      if (context._pendingDeadline !== undefined) return executeWithinDeadline(this, core, callback, context, state);
      // A context already in use (a nested call) gets its callback restored afterwards: the slower path.
      if (context._callback !== undefined) return executeWithContext(core, callback, context, state);
      ctx = context;
    } else {
      if (context?.deadline !== undefined) {
        return executeWithinDeadline(this, core, callback, new ResilienceContext(context), state);
      }
      ctx = new ResilienceContext(context);
    }
    ctx._callback = callback as ResilienceCallback<unknown, unknown>;
    // A context on this path has never run a callback, so it holds no state of an earlier call.
    if (state !== undefined) ctx._state = state;
    // No head throws synchronously (each catches what its strategy throws), so this is always a promise.
    return core.head(ctx) as Promise<R>;
  }

  /**
   * This pipeline as one strategy of another: its strategies run in its place, around the rest of the
   * outer pipeline, on the outer call's context (one callback, one attempt count). A pipeline handed out
   * by a registry keeps following its reloads. `builder.addPipeline` uses it for such pipelines.
   */
  asStrategy(): ResilienceStrategy<unknown> {
    return (this.nested ??= {
      execute: (next, context) => {
        const { components, reporter } = this.core;
        const strategies = components?.strategies ?? [];
        // Its own executions too, under its own name (Polly's nested pipelines report theirs).
        return reporter
          ? reporter.execute((c) => runNested(strategies, next, c), context)
          : runNested(strategies, next, context);
      },
    });
  }

  /** @internal True when some listener wants this pipeline's own events (`PipelineExecuting`/`Executed`). */
  get _reportsExecutions(): boolean {
    return this.core.reporter !== undefined;
  }

  /**
   * The strategies that the configuration section `section` (`retry`, `circuitBreaker`…) added to this
   * pipeline, as one strategy of another pipeline — the same strategy objects, so the same circuit, the
   * same limiter and the same telemetry name. Follows reloads like `asStrategy()`; a reload that drops
   * the section leaves the step empty until one brings it back. `undefined` when the pipeline has no
   * such section now.
   */
  sectionAsStrategy(section: string): ResilienceStrategy<unknown> | undefined {
    if (sectionStrategies(this.core.components, section).length === 0) return undefined;
    return { execute: (next, context) => runNested(sectionStrategies(this.core.components, section), next, context) };
  }

  /** The descriptions of the strategies `section` added (see `sectionAsStrategy`). @internal */
  describeSection(section: string): readonly ResilienceStrategyDescription[] {
    const components = this.core.components;
    const sections = components?.sections;
    if (!sections) return [];
    return flattenDescriptions(components.descriptions.filter((_, index) => sections[index] === section));
  }

  /**
   * What inspection reads of the strategies this pipeline runs now (circuits, limiters), outermost
   * first; a nested registry pipeline is inspected under its own name, not here. @internal
   */
  strategyPorts(): StrategyPorts[] {
    const ports: StrategyPorts[] = [];
    for (const strategy of this.core.components?.strategies ?? []) if (strategy.ports) ports.push(strategy.ports);
    return ports;
  }

  /** The strategies of this pipeline, outermost first (those of a nested pipeline in its place). */
  describe(): readonly ResilienceStrategyDescription[] {
    const descriptions = this.core.components?.descriptions;
    return descriptions ? flattenDescriptions(descriptions) : [];
  }

  /** Like `execute`, but returns the final outcome instead of throwing. Never rejects. */
  executeOutcome<R extends T = T, S = void>(
    callback: ResilienceCallback<R, S>,
    context?: ResilienceContext | ResilienceContextOptions,
    state?: S,
  ): Promise<Outcome<R>> {
    return this.execute(callback, context, state).then(outcomeFromValue, outcomeFromError);
  }

  /**
   * Releases what the pipeline's strategies hold (timers, waiting callers). Pipelines built by a registry
   * are disposed by the registry.
   */
  async dispose(): Promise<void> {
    const strategies = this.core.components?.strategies;
    if (strategies) await Promise.all(strategies.map((s) => Promise.resolve(s.dispose?.())));
  }
}

/**
 * Builds the chain of `components`: heads[i] runs strategies i… and then the callback; in front, the
 * pipeline's own events when some listener wants them (pipeline events nobody wants cost nothing).
 */
function createCore(components: PipelineComponents | undefined): PipelineCore {
  const own = components?.strategies ?? [];
  const telemetry = components?.telemetry;
  const reportsExecuting = telemetry?.wants('PipelineExecuting') ?? false;
  const reportsExecuted = telemetry?.wants('PipelineExecuted') ?? false;
  const reporter =
    reportsExecuting || reportsExecuted
      ? new PipelineTelemetryStrategy(
          telemetry!,
          components!.timeProvider,
          reportsExecuting,
          reportsExecuted,
          reportsExecuted && telemetry!.timesDuration('PipelineExecuted'),
          own[0],
        )
      : undefined;
  const strategies = reporter ? [reporter, ...own] : own;
  // Two or more strategies in a row that can run inline share one head (one promise hop and one closure
  // pair per call for the whole run).
  // Stryker disable next-line ArrayDeclaration: equivalent — every slot is assigned below before it is read
  const heads: StrategyNext<unknown>[] = [];
  heads[strategies.length] = invokeCallback;
  for (let i = strategies.length - 1; i >= 0; i--) {
    const strategy = strategies[i];
    const next = heads[i + 1];
    if (isInlineStrategy(strategy) && i + 1 < strategies.length && isInlineStrategy(strategies[i + 1])) {
      const run: InlineStrategy<unknown>[] = [strategy];
      for (let j = i + 1; j < strategies.length && run.length < MAX_INLINE_RUN; j++) {
        const inner = strategies[j];
        if (!isInlineStrategy(inner)) break;
        run.push(inner);
      }
      const end = i + run.length;
      heads[i] = inlineHead(run, heads.slice(i + 1, end + 1), heads[end]);
    } else {
      heads[i] = (context) => executeStrategy(strategy, next, context);
    }
  }
  return { components, head: heads[0], reporter };
}

/**
 * A call on a context already in use (a nested call): restores what it changes on the context. A promise
 * chain rather than an `async` function: one continuation per call, no `settle` in between.
 */
function executeWithContext<R, S>(
  core: PipelineCore,
  callback: ResilienceCallback<R, S>,
  ctx: ResilienceContext,
  state: S | undefined,
): Promise<R> {
  // A context may be reused by a nested pipeline call: restore what this call changes.
  const previousCallback = ctx._callback;
  const previousState = ctx._state;
  const previousAttempt = ctx.attemptNumber;
  ctx._callback = callback as ResilienceCallback<unknown, unknown>;
  if (state !== previousState) ctx._state = state;
  const finish = (): void => {
    ctx._callback = previousCallback;
    if (state !== previousState) ctx._state = previousState;
    ctx.attemptNumber = previousAttempt;
  };
  // No head throws synchronously (each catches what its strategy throws), so this is always a promise.
  return (core.head(ctx) as Promise<R>).then(
    (value) => {
      finish();
      return value;
    },
    (error: unknown) => {
      finish();
      throw error;
    },
  );
}

/**
 * A call whose context carries the caller's deadline: rejected at once when it has passed; otherwise the
 * deadline is armed — one timer on the pipeline's clock that aborts the call's scope — for the call, and
 * released (and the context restored, ready to be reused) when it ends. A call that ends because the
 * deadline aborted it fails with `DeadlineExceededError`.
 */
function executeWithinDeadline<R, S>(
  pipeline: ResiliencePipeline<never>,
  core: PipelineCore,
  callback: ResilienceCallback<R, S>,
  ctx: ResilienceContext,
  state: S | undefined,
): Promise<R> {
  const deadline = ctx._pendingDeadline;
  const time = core.components?.timeProvider ?? systemTimeProvider;
  const run = () => pipeline.execute(callback as ResilienceCallback<never, S>, ctx, state) as Promise<R>;
  if (deadline === undefined) return run();
  const budget = deadline - time.now();
  if (!(budget > 0)) return Promise.reject(new DeadlineExceededError(0));
  const parentScope = ctx._scope;
  const scope = new LinkedCancellationScope(parentScope);
  const previousDeadline = ctx._deadline;
  const reason = new DOMException(`The deadline passed (${budget} ms after the call started).`, 'TimeoutError');
  const handle = time.setTimeout(() => scope.abort(reason), Math.min(budget, MAX_TIMER_DELAY));
  ctx._pendingDeadline = undefined;
  ctx._scope = scope;
  ctx._deadline = Math.min(deadline, previousDeadline);
  const finish = (): void => {
    time.clearTimeout(handle);
    scope.dispose();
    ctx._scope = parentScope;
    ctx._deadline = previousDeadline;
    ctx._pendingDeadline = deadline;
  };
  return run().then(
    (value) => {
      finish();
      return value;
    },
    (error: unknown) => {
      const endedByDeadline = scope.abortedHere && !parentScope.aborted;
      finish();
      if (endedByDeadline && (isCancellation(error) || isTimeoutFault(error))) {
        throw new DeadlineExceededError(budget, { cause: error });
      }
      throw error;
    },
  );
}

/** An error a deadline's abort leads to: its reason (a `TimeoutError`) or a timeout error of the callback's. */
function isTimeoutFault(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { name?: unknown }).name === 'TimeoutError';
}

/** Runs `strategies` with `next` as the innermost step (a pipeline nested in another). */
function runNested(
  strategies: readonly ResilienceStrategy<unknown>[],
  next: StrategyNext<unknown>,
  context: ResilienceContext,
): Promise<unknown> {
  const step = (index: number, ctx: ResilienceContext): Promise<unknown> =>
    index === strategies.length ? next(ctx) : executeStrategy(strategies[index], (c) => step(index + 1, c), ctx);
  return step(0, context);
}

function sectionStrategies(
  components: PipelineComponents | undefined,
  section: string,
): readonly ResilienceStrategy<unknown>[] {
  const sections = components?.sections;
  if (!sections) return [];
  return components.strategies.filter((_, index) => sections[index] === section);
}

function flattenDescriptions(sources: readonly StrategyDescriptionSource[]): readonly ResilienceStrategyDescription[] {
  return sources.flatMap((source) => ('describe' in source ? source.describe() : [source]));
}

/**
 * Runs one strategy, turning a synchronous throw (a faulty custom strategy, a state store that throws) into
 * a rejection: the strategies around it then see a failure, as they would inside an inline run.
 */
function executeStrategy(
  strategy: ResilienceStrategy<unknown>,
  next: StrategyNext<unknown>,
  context: ResilienceContext,
): Promise<unknown> {
  try {
    return strategy.execute(next, context);
  } catch (error) {
    return Promise.reject(error);
  }
}
