import { isCancellation } from '../outcome/cancellation.rule.js';
import type { ResilienceContext } from '../context/resilience.context.js';
import { outcomeFromError, outcomeFromValue, unwrapOutcome } from '../outcome/outcome.model.js';
import { handleAllErrors } from '../outcome/outcome.predicates.js';
import type {
  ResilienceStrategy,
  StrategyBuilderContext,
  StrategyNext,
} from '../strategy/resilience-strategy.interface.js';
import type { StrategyTelemetry } from '../telemetry/strategy.telemetry.js';
import type { FallbackArguments, FallbackStrategyOptions } from './fallback.options.js';

/** Replaces a handled outcome with a value or the result of a fallback action. @internal */
export class FallbackStrategy<T> implements ResilienceStrategy<T> {
  private readonly shouldHandle: NonNullable<FallbackStrategyOptions<T>['shouldHandle']>;
  private readonly handlesResults: boolean;
  private readonly telemetry: StrategyTelemetry;

  constructor(
    private readonly options: FallbackStrategyOptions<T>,
    context: StrategyBuilderContext,
  ) {
    this.shouldHandle = options.shouldHandle ?? handleAllErrors;
    this.handlesResults = options.shouldHandle !== undefined;
    this.telemetry = context.telemetry;
  }

  execute(next: StrategyNext<T>, context: ResilienceContext): Promise<T> {
    return next(context).then(
      this.handlesResults ? (value) => this.handle({ outcome: outcomeFromValue(value), context }) : undefined,
      (error: unknown) => this.handle({ outcome: outcomeFromError(error), context }),
    );
  }

  private async handle(args: FallbackArguments<T>): Promise<T> {
    // A cancellation is never replaced: the caller asked for the call to stop.
    const { outcome, context } = args;
    if ((!outcome.ok && isCancellation(outcome.error, context)) || !(await this.shouldHandle(args))) {
      return unwrapOutcome(outcome);
    }
    this.telemetry.report('OnFallback', 'warning', context, { outcome });
    if (this.options.onFallback) await this.options.onFallback(args);
    const action = this.options.fallbackAction;
    return action ? await action(args) : (this.options.fallbackValue as T);
  }
}
