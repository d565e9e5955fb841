import { isCancellation } from '../outcome/cancellation.rule.js';
import type { ResilienceContext } from '../context/resilience.context.js';
import { handleAllErrors } from '../outcome/outcome.predicates.js';
import type {
  ResilienceStrategy,
  StrategyBuilderContext,
  StrategyNext,
} from '../strategy/resilience-strategy.interface.js';
import type { StrategyTelemetry } from '../telemetry/strategy.telemetry.js';
import { getTimestamp, type TimeProvider } from '../time/time.provider.js';
import { HedgingExecution, type HedgedAttempt, type HedgingPolicy } from './hedging.execution.js';
import { DEFAULT_HEDGING_DELAY, DEFAULT_MAX_HEDGED_ATTEMPTS, type HedgingStrategyOptions } from './hedging.options.js';

/**
 * Hedging (Polly v8 semantics): starts the primary attempt, then more attempts after `delay` (or at once,
 * or after failures); the first outcome that is not handled is accepted. Every attempt runs on a copy of
 * the context with its own signal; the accepted attempt's properties merge back into the caller's
 * context; every other attempt is aborted and awaited before the result returns.
 *
 * @internal
 */
export class HedgingStrategy<T> implements ResilienceStrategy<T>, HedgingPolicy<T> {
  readonly maxHedged: number;
  readonly time: TimeProvider;
  readonly telemetry: StrategyTelemetry;
  readonly timesAttempts: boolean;
  private readonly reportsAttempts: boolean;
  private readonly shouldHandle: NonNullable<HedgingStrategyOptions<T>['shouldHandle']>;

  constructor(
    readonly options: HedgingStrategyOptions<T>,
    context: StrategyBuilderContext,
  ) {
    this.maxHedged = options.maxHedgedAttempts ?? DEFAULT_MAX_HEDGED_ATTEMPTS;
    this.time = context.timeProvider;
    this.telemetry = context.telemetry;
    this.reportsAttempts = context.telemetry.wants('ExecutionAttempt');
    this.timesAttempts = this.reportsAttempts && context.telemetry.timesDuration('ExecutionAttempt');
    this.shouldHandle = options.shouldHandle ?? handleAllErrors;
  }

  execute(next: StrategyNext<T>, context: ResilienceContext): Promise<T> {
    return new HedgingExecution(this, next, context).run();
  }

  async delayFor(context: ResilienceContext, attemptNumber: number): Promise<number> {
    const generator = this.options.delayGenerator;
    const delay = generator
      ? await generator({ context, attemptNumber })
      : (this.options.delay ?? DEFAULT_HEDGING_DELAY);
    return Number.isNaN(delay) ? DEFAULT_HEDGING_DELAY : delay;
  }

  async isHandled(attempt: HedgedAttempt<T>, primary: ResilienceContext): Promise<boolean> {
    const outcome = attempt.outcome!;
    const handled =
      !(!outcome.ok && (primary.isCancellationRequested || isCancellation(outcome.error, primary))) &&
      (await this.shouldHandle({ outcome, context: attempt.context }));
    // Stryker disable next-line ConditionalExpression: equivalent — report() drops an event no listener wants (its duration is read only for a listener that times it); this only skips building the event
    if (this.reportsAttempts) {
      this.telemetry.report('ExecutionAttempt', handled ? 'warning' : 'information', attempt.context, {
        outcome,
        attemptNumber: attempt.attemptNumber,
        duration: this.timesAttempts ? getTimestamp(this.time) - attempt.started : 0,
        handled,
      });
    }
    return handled;
  }
}
