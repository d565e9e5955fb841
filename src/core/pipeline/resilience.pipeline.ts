import {
  ResilienceContext,
  type ResilienceCallback,
  type ResilienceContextOptions,
} from '../context/resilience.context.js';
import { outcomeFromError, outcomeFromValue, unwrapOutcome, type Outcome } from '../outcome.model.js';
import { settle } from '../utils/settle.util.js';
import type { StrategyTelemetry } from '../telemetry/strategy.telemetry.js';
import type { TimeProvider } from '../time/time.provider.js';
import { invokeCallback } from './callback.invoker.js';
import { isInlineStrategy, type InlineStrategy } from '../inline-strategy.interface.js';
import { inlineHead, MAX_INLINE_RUN } from './inline.runner.js';
import type { ResilienceStrategy, StrategyNext } from '../resilience-strategy.interface.js';

/** @internal */
export interface PipelineComponents {
  readonly strategies: readonly ResilienceStrategy<unknown>[];
  /** What each of `strategies` is, in the same order. */
  readonly descriptions: readonly ResilienceStrategyDescription[];
  readonly telemetry: StrategyTelemetry;
  readonly timeProvider: TimeProvider;
}

/** One strategy of a pipeline, as telemetry names it. */
export interface ResilienceStrategyDescription {
  /** The kind of strategy, e.g. `retry` or `circuit-breaker` (`custom` for a strategy added without a type). */
  readonly type: string;
  /** The strategy's `name` option, when it was given one. */
  readonly name: string | undefined;
}

/**
 * An immutable, reusable chain of strategies. Build one with `ResiliencePipelineBuilder` and share it:
 * strategies that keep state (a circuit breaker, a rate limiter) keep it across calls.
 *
 * @publicApi
 */
export class ResiliencePipeline<T = unknown> {
  /** A pipeline with no strategies: executes the callback as it is. */
  static readonly empty: ResiliencePipeline<unknown> = new ResiliencePipeline<unknown>(undefined);

  /** @internal */
  readonly _components: PipelineComponents | undefined;
  private readonly head: StrategyNext<unknown>;
  private readonly telemetry: StrategyTelemetry | undefined;
  private nested: ResilienceStrategy<unknown> | undefined;

  /** @internal Use `ResiliencePipelineBuilder`. */
  constructor(components: PipelineComponents | undefined) {
    this._components = components;
    this.telemetry = components?.telemetry.enabled ? components.telemetry : undefined;
    // Stryker disable next-line ArrayDeclaration: only `ResiliencePipeline.empty` has no components, and it is built at import, before any test activates a mutant
    const strategies = components?.strategies ?? [];
    // heads[i] runs strategies i… and then the callback. Two or more strategies in a row that can run inline
    // share one head (one promise hop and one closure pair per call for the whole run).
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
    this.head = heads[0];
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
    let ctx: ResilienceContext;
    if (context instanceof ResilienceContext) {
      // A context already in use (a nested call) gets its callback restored afterwards: the slower path.
      if (this.telemetry || context._callback !== undefined) return this.executeWithContext(callback, context, state);
      ctx = context;
    } else {
      if (this.telemetry) return this.executeWithContext(callback, context, state);
      ctx = new ResilienceContext(context);
    }
    ctx._callback = callback as ResilienceCallback<unknown, unknown>;
    // A context on this path has never run a callback, so it holds no state of an earlier call.
    if (state !== undefined) ctx._state = state;
    // No head throws synchronously (each catches what its strategy throws), so this is always a promise.
    return this.head(ctx) as Promise<R>;
  }

  /**
   * This pipeline as one strategy of another: its strategies run in its place, around the rest of the
   * outer pipeline, on the outer call's context (one callback, one attempt count). A pipeline handed out
   * by a registry keeps following its reloads. Use it with `builder.addStrategy`; `addPipeline` copies
   * the strategies of a fixed pipeline instead.
   */
  asStrategy(): ResilienceStrategy<unknown> {
    return (this.nested ??= { execute: (next, context) => this.executeNested(next, context) });
  }

  /** Runs the strategies of this pipeline with `next` as the innermost step. */
  protected executeNested(next: StrategyNext<unknown>, context: ResilienceContext): Promise<unknown> {
    const strategies = this._components?.strategies ?? [];
    const step = (index: number, ctx: ResilienceContext): Promise<unknown> =>
      index === strategies.length ? next(ctx) : executeStrategy(strategies[index], (c) => step(index + 1, c), ctx);
    return step(0, context);
  }

  /** The strategies of this pipeline, outermost first (those of a nested pipeline in its place). */
  describe(): readonly ResilienceStrategyDescription[] {
    return this._components?.descriptions ?? [];
  }

  /** Like `execute`, but returns the final outcome instead of throwing. Never rejects. */
  executeOutcome<R extends T = T, S = void>(
    callback: ResilienceCallback<R, S>,
    context?: ResilienceContext | ResilienceContextOptions,
    state?: S,
  ): Promise<Outcome<R>> {
    return this.execute(callback, context, state).then(outcomeFromValue, outcomeFromError);
  }

  private async executeWithContext<R, S>(
    callback: ResilienceCallback<R, S>,
    context: ResilienceContext | ResilienceContextOptions | undefined,
    state: S | undefined,
  ): Promise<R> {
    const ctx = context instanceof ResilienceContext ? context : new ResilienceContext(context);
    // A context may be reused by a nested pipeline call: restore what this call changes.
    const previousCallback = ctx._callback;
    const previousState = ctx._state;
    const previousAttempt = ctx.attemptNumber;
    ctx._callback = callback as ResilienceCallback<unknown, unknown>;
    if (state !== previousState) ctx._state = state;
    const telemetry = this.telemetry;
    const started = telemetry ? this.now() : 0;
    if (telemetry) telemetry.report('PipelineExecuting', 'debug', ctx, {});
    let outcome: Outcome<R> | undefined;
    try {
      outcome = await settle(this.head(ctx) as Promise<R>);
      return unwrapOutcome(outcome);
    } finally {
      ctx._callback = previousCallback;
      if (state !== previousState) ctx._state = previousState;
      ctx.attemptNumber = previousAttempt;
      if (telemetry && outcome) {
        telemetry.report('PipelineExecuted', outcome.ok ? 'information' : 'error', ctx, {
          outcome,
          duration: this.now() - started,
        });
      }
    }
  }

  /**
   * Releases what the pipeline's strategies hold (timers, waiting callers). Pipelines built by a registry
   * are disposed by the registry.
   */
  async dispose(): Promise<void> {
    const strategies = this._components?.strategies;
    if (strategies) await Promise.all(strategies.map((s) => Promise.resolve(s.dispose?.())));
  }

  private now(): number {
    return this._components!.timeProvider.now();
  }
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
