import { isCancellationOutcome } from '../context/cancellation.rule.js';
import type { ResilienceContext } from '../context/resilience.context.js';
import { outcomeFromError, outcomeFromValue, unwrapOutcome, type Outcome } from '../outcome.model.js';
import { handleAllErrors } from '../outcome.predicates.js';
import type { ResilienceStrategy, StrategyBuilderContext, StrategyNext } from '../resilience-strategy.interface.js';
import { getRetryAfter, isBrokenCircuitError, isIsolatedCircuitError } from '../resilience.errors.js';
import type { StrategyTelemetry } from '../telemetry/strategy.telemetry.js';
import type { TimeProvider } from '../time/time.provider.js';
import { settle } from '../utils/settle.util.js';
import { RetryBudget } from './retry.budget.js';
import { clampDelay, computeBackoffDelay, type BackoffOptions, type BackoffState } from './backoff.helper.js';
import { DEFAULT_RETRY_BACKOFF_TYPE, DEFAULT_RETRY_DELAY, DEFAULT_RETRY_MAX_ATTEMPTS } from './retry.constants.js';
import type { RetryPredicateArguments, RetryStrategyOptions } from './retry.options.js';

/**
 * The retry loop (Polly v8 semantics): attempt 0 is the original call; a handled outcome is retried up to
 * `maxRetryAttempts` times after a cancellable wait; cancellation and open circuits end the loop.
 *
 * @internal
 */
export class RetryStrategy<T> implements ResilienceStrategy<T> {
  private readonly maxRetryAttempts: number;
  private readonly backoff: BackoffOptions;
  private readonly shouldHandle: NonNullable<RetryStrategyOptions<T>['shouldHandle']>;
  private readonly handlesResults: boolean;
  private readonly random: () => number;
  private readonly time: TimeProvider;
  private readonly telemetry: StrategyTelemetry;
  private readonly budget: RetryBudget | undefined;

  constructor(
    private readonly options: RetryStrategyOptions<T>,
    context: StrategyBuilderContext,
  ) {
    this.maxRetryAttempts = options.maxRetryAttempts ?? DEFAULT_RETRY_MAX_ATTEMPTS;
    this.backoff = {
      backoffType: options.backoffType ?? DEFAULT_RETRY_BACKOFF_TYPE,
      delay: options.delay ?? DEFAULT_RETRY_DELAY,
      useJitter: options.useJitter ?? false,
      maxDelay: options.maxDelay,
    };
    this.shouldHandle = options.shouldHandle ?? handleAllErrors;
    this.handlesResults = options.shouldHandle !== undefined;
    this.random = options.random ?? context.random;
    this.time = context.timeProvider;
    this.telemetry = context.telemetry;
    const budget = options.budget;
    this.budget =
      budget === undefined || budget instanceof RetryBudget ? budget : new RetryBudget(budget, context.timeProvider);
  }

  execute(next: StrategyNext<T>, context: ResilienceContext): Promise<T> {
    this.budget?.recordCall();
    if (this.telemetry.enabled || this.options.onRetry) return this.loop(next, context, undefined);
    context.attemptNumber = 0;
    // Fast path: a first attempt that succeeds, with the default predicate, adds one promise hop and nothing else.
    return next(context).then(
      this.handlesResults ? (value) => this.loop(next, context, outcomeFromValue(value)) : undefined,
      (error) => this.loop(next, context, outcomeFromError(error)),
    );
  }

  private async loop(
    next: StrategyNext<T>,
    context: ResilienceContext,
    firstOutcome: Outcome<T> | undefined,
  ): Promise<T> {
    const backoffState: BackoffState = { previous: 0 };
    const timed = this.telemetry.enabled || this.options.onRetry !== undefined;
    let attempt = 0;
    let pending = firstOutcome;
    try {
      for (;;) {
        context.attemptNumber = attempt;
        const started = timed ? this.time.now() : 0;
        const outcome = pending ?? (await settle(next(context)));
        pending = undefined;
        const duration = timed ? this.time.now() - started : 0;

        const handled = await this.isHandled(outcome, context, attempt);
        if (this.telemetry.enabled) {
          this.telemetry.report('ExecutionAttempt', handled ? 'warning' : 'information', context, {
            outcome,
            attemptNumber: attempt,
            duration,
            handled,
          });
        }
        if (!handled) return unwrapOutcome(outcome);
        if (attempt >= this.maxRetryAttempts) return this.giveUp(outcome, context, attempt, 'max-attempts');
        if (this.budget && !this.budget.tryWithdraw()) return this.giveUp(outcome, context, attempt, 'budget');

        const args: RetryPredicateArguments<T> = { outcome, context, attemptNumber: attempt };
        const delay = await this.nextDelay(args, backoffState);
        if (delay > 0 && this.time.now() + delay > context._deadline) {
          // Waiting would outlive the enclosing timeout: give the caller the real failure now.
          return this.giveUp(outcome, context, attempt, 'deadline');
        }

        if (this.options.onRetry) await this.options.onRetry({ ...args, retryDelay: delay, duration });
        if (this.telemetry.enabled) {
          this.telemetry.report('OnRetry', 'warning', context, {
            outcome,
            attemptNumber: attempt,
            retryDelay: delay,
            duration,
          });
        }
        if (delay > 0) {
          await this.time.delay(delay, context.signal);
        } else if (context.isCancellationRequested) {
          throw context._scope.reason;
        }
        attempt++;
      }
    } finally {
      context.attemptNumber = 0;
    }
  }

  private async isHandled(outcome: Outcome<T>, context: ResilienceContext, attempt: number): Promise<boolean> {
    // Cancellation is never retried.
    if (context.isCancellationRequested || isCancellationOutcome(outcome, context)) return false;
    if (!outcome.ok && !this.options.retryOnBrokenCircuit) {
      if (isBrokenCircuitError(outcome.error) || isIsolatedCircuitError(outcome.error)) return false;
    }
    if (outcome.ok && !this.handlesResults) return false;
    return await this.shouldHandle({ outcome, context, attemptNumber: attempt });
  }

  private async nextDelay(args: RetryPredicateArguments<T>, state: BackoffState): Promise<number> {
    const { delayGenerator, honorRetryAfter, retryAfter } = this.options;
    if (delayGenerator) {
      const generated = await delayGenerator(args);
      if (typeof generated === 'number' && generated >= 0 && !Number.isNaN(generated))
        return clampDelay(generated, undefined);
    }
    if (honorRetryAfter !== false) {
      const serverWait = retryAfter
        ? retryAfter(args)
        : args.outcome.ok
          ? undefined
          : getRetryAfter(args.outcome.error);
      if (typeof serverWait === 'number' && serverWait >= 0) return clampDelay(serverWait, this.backoff.maxDelay);
    }
    return computeBackoffDelay(this.backoff, args.attemptNumber, state, this.random);
  }

  private giveUp(
    outcome: Outcome<T>,
    context: ResilienceContext,
    attempt: number,
    reason: 'max-attempts' | 'deadline' | 'budget',
  ): T {
    if (this.telemetry.enabled) {
      this.telemetry.report('OnRetryGiveUp', 'error', context, { outcome, attemptNumber: attempt, reason });
    }
    return unwrapOutcome(outcome);
  }
}
