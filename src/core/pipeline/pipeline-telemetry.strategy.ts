import type { ResilienceCallback, ResilienceContext } from '../context/resilience.context.js';
import type { InlineStrategy } from '../strategy/inline-strategy.interface.js';
import { outcomeFromError, outcomeFromValue, type Outcome } from '../outcome/outcome.model.js';
import type { ResilienceStrategy, StrategyNext } from '../strategy/resilience-strategy.interface.js';
import type { StrategyTelemetry } from '../telemetry/strategy.telemetry.js';
import { offerTimestamp, takeTimestamp } from '../time/shared-timestamp.util.js';
import { getTimestamp, type TimeProvider } from '../time/time.provider.js';

/** The arguments of every `PipelineExecuting` event (it has none): one frozen object, not one per call. */
const NO_ARGUMENTS: Record<string, never> = Object.freeze({});

/** The state of a call whose callback a listener wrapped when it started (a tracing span's scope). */
class WrappedCall {
  constructor(
    readonly started: number,
    readonly callback: ResilienceCallback<unknown, unknown> | undefined,
  ) {}
}

/**
 * The pipeline's own events, `PipelineExecuting` and `PipelineExecuted`, as the outermost step of its
 * chain: it runs inline with the strategies after it (no promise hop of its own on the success path),
 * and its start and end timestamps are those of an outermost retry's attempt when there is one (see
 * `offerTimestamp`). Built only when some listener wants one of the two events; never one of the
 * pipeline's strategies (not described, not inspected); `asStrategy` runs it around the strategies, so a
 * nested pipeline reports its own executions under its own name, as Polly's do.
 *
 * @internal
 */
export class PipelineTelemetryStrategy implements ResilienceStrategy<unknown>, InlineStrategy<unknown> {
  constructor(
    private readonly telemetry: StrategyTelemetry,
    private readonly time: TimeProvider,
    private readonly reportsExecuting: boolean,
    private readonly reportsExecuted: boolean,
    /** Some listener reads the duration of `PipelineExecuted`: the call is timed. */
    private readonly timed: boolean,
    /** The pipeline's outermost strategy, with which start and end timestamps are shared. */
    private readonly first: object | undefined,
  ) {}

  execute(next: StrategyNext<unknown>, context: ResilienceContext): Promise<unknown> {
    const state = this.enter(context);
    return this.inlineResume(state, next, context, next(context));
  }

  /**
   * Reports `PipelineExecuting`. The state is when the call started (0 when untimed), which the next
   * strategy of the run may take as its own start (an outermost retry's first attempt), or a
   * `WrappedCall` when a listener wrapped the callback.
   */
  inlineEnter(context: ResilienceContext): unknown {
    const state = this.enter(context);
    if (this.timed && this.first !== undefined) offerTimestamp(this.first, this.time, startOf(state));
    return state;
  }

  private enter(context: ResilienceContext): unknown {
    const started = this.timed ? getTimestamp(this.time) : 0;
    if (!this.reportsExecuting) return started;
    const callback = context._callback;
    this.telemetry.report('PipelineExecuting', 'debug', context, NO_ARGUMENTS);
    return context._callback === callback ? started : new WrappedCall(started, callback);
  }

  /** The run's exit: the end is the one the outermost strategy read (a retry's attempt end), if it offered it. */
  inlineExitValue(state: unknown, context: ResilienceContext, value: unknown): boolean {
    const started = this.leave(state, context);
    if (this.reportsExecuted) {
      const duration = this.timed ? takeTimestamp(this.first ?? this, this.time) - started : 0;
      this.report(context, outcomeFromValue(value), duration);
    }
    return true;
  }

  inlineResume(
    state: unknown,
    _next: StrategyNext<unknown>,
    context: ResilienceContext,
    inner: Promise<unknown>,
  ): Promise<unknown> {
    return inner.then(
      (value) => {
        this.finish(state, context, true, value);
        return value;
      },
      (error: unknown) => {
        this.finish(state, context, false, error);
        throw error;
      },
    );
  }

  private finish(state: unknown, context: ResilienceContext, ok: boolean, result: unknown): void {
    const started = this.leave(state, context);
    if (!this.reportsExecuted) return;
    const duration = this.timed ? getTimestamp(this.time) - started : 0;
    this.report(context, ok ? outcomeFromValue(result) : outcomeFromError(result), duration);
  }

  /**
   * The call's start; puts back the callback a listener wrapped when the call started (nothing runs the
   * callback of an ended call, and the context must not keep the listener's span alive).
   */
  private leave(state: unknown, context: ResilienceContext): number {
    if (typeof state === 'number') return state;
    context._callback = (state as WrappedCall).callback;
    return (state as WrappedCall).started;
  }

  private report(context: ResilienceContext, outcome: Outcome<unknown>, duration: number): void {
    this.telemetry.report('PipelineExecuted', outcome.ok ? 'information' : 'error', context, { outcome, duration });
  }
}

function startOf(state: unknown): number {
  return typeof state === 'number' ? state : (state as WrappedCall).started;
}
