import { isCancellation } from '../outcome/cancellation.rule.js';
import type { ResilienceContext } from '../context/resilience.context.js';
import { outcomeFromError, outcomeFromValue, unwrapOutcome, type Outcome } from '../outcome/outcome.model.js';
import { handleAllErrors } from '../outcome/outcome.predicates.js';
import type {
  ResilienceStrategy,
  StrategyBuilderContext,
  StrategyNext,
} from '../strategy/resilience-strategy.interface.js';
import { getRetryAfter, isBrokenCircuitError, isIsolatedCircuitError } from '../resilience.errors.js';
import type { StrategyTelemetry } from '../telemetry/strategy.telemetry.js';
import { offerTimestamp, takeTimestamp } from '../time/shared-timestamp.util.js';
import { getTimestamp, type TimeProvider } from '../time/time.provider.js';
import type { InlineStrategy } from '../strategy/inline-strategy.interface.js';
import { RetryBudget } from './retry.budget.js';
import { clampDelay, computeBackoffDelay, type BackoffOptions, type BackoffState } from './backoff.helper.js';
import { DEFAULT_RETRY_BACKOFF_TYPE, DEFAULT_RETRY_DELAY, DEFAULT_RETRY_MAX_ATTEMPTS } from './retry.constants.js';
import type { RetryPredicateArguments, RetryStrategyOptions } from './retry.options.js';

/** The backoff state of backoffs that keep none (shared, never written). */
const STATELESS_BACKOFF: BackoffState = Object.freeze({ previous: 0 });

/**
 * The retry loop (Polly v8 semantics): attempt 0 is the original call; a handled outcome is retried up to
 * `maxRetryAttempts` times after a cancellable wait; cancellation and open circuits end the loop.
 *
 * @internal
 */
export class RetryStrategy<T> implements ResilienceStrategy<T>, InlineStrategy<T> {
  private readonly maxRetryAttempts: number;
  private readonly backoff: BackoffOptions;
  private readonly shouldHandle: NonNullable<RetryStrategyOptions<T>['shouldHandle']>;
  private readonly handlesResults: boolean;
  private readonly random: () => number;
  private readonly time: TimeProvider;
  private readonly telemetry: StrategyTelemetry;
  private readonly budget: RetryBudget | undefined;
  /** A callback receives `RetryPredicateArguments` (delay generator, Retry-After reader, onRetry). */
  private readonly needsRetryArguments: boolean;
  private readonly backoffKeepsState: boolean;
  /** Some listener wants `ExecutionAttempt`: every attempt is timed and reported, the first one included. */
  private readonly reportsAttempts: boolean;
  /** Some listener wants `OnRetry`. */
  private readonly reportsRetries: boolean;
  /** Some listener wants `OnRetryGiveUp`. */
  private readonly reportsGiveUps: boolean;
  /** Attempts are timed: an event some listener reads the duration of, or `onRetry`, carries it. */
  private readonly timed: boolean;
  /** The loop runs from the first attempt (`onRetry` is given the arguments of every attempt). */
  private readonly loopsAtOnce: boolean;

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
    this.reportsAttempts = context.telemetry.wants('ExecutionAttempt');
    this.reportsRetries = context.telemetry.wants('OnRetry');
    this.reportsGiveUps = context.telemetry.wants('OnRetryGiveUp');
    this.timed =
      (this.reportsAttempts && context.telemetry.timesDuration('ExecutionAttempt')) ||
      (this.reportsRetries && context.telemetry.timesDuration('OnRetry')) ||
      options.onRetry !== undefined;
    this.loopsAtOnce = options.onRetry !== undefined;
    const budget = options.budget;
    this.budget =
      budget === undefined || budget instanceof RetryBudget ? budget : new RetryBudget(budget, context.timeProvider);
    this.needsRetryArguments =
      options.delayGenerator !== undefined || options.retryAfter !== undefined || options.onRetry !== undefined;
    // Stryker disable next-line ConditionalExpression,LogicalOperator: equivalent — a fresh state object is never touched by the backoffs that keep none
    this.backoffKeepsState = this.backoff.backoffType === 'exponential' && this.backoff.useJitter;
  }

  execute(next: StrategyNext<T>, context: ResilienceContext): Promise<T> {
    const state = this.inlineEnter(context, next);
    if (typeof state === 'object') return state;
    // Fast path: a first attempt that succeeds, with the default predicate, adds one promise hop and nothing else.
    const first = next(context);
    if (this.reportsAttempts && !this.handlesResults) {
      return first.then(
        (value) => {
          this.reportFirstValue(state, context, value);
          return value;
        },
        (error) => this.loop(next, context, outcomeFromError(error), state),
      );
    }
    return this.inlineResume(state, next, context, first);
  }

  /**
   * @internal Runs the loop at once when every attempt is reported (or `onRetry` is set); otherwise the
   * first attempt runs inline, and its state is when it started (when a retry would report its duration).
   */
  inlineEnter(context: ResilienceContext, next: StrategyNext<T>): Promise<T> | number | undefined {
    this.budget?.recordCall();
    if (this.loopsAtOnce) return this.loop(next, context, undefined, 0);
    context.attemptNumber = 0;
    // The pipeline's start, when this is its outermost strategy and the pipeline is timed.
    return this.timed ? takeTimestamp(this, this.time) : undefined;
  }

  /** @internal A value ends the call unless a predicate may want to retry it. */
  inlineExitValue(state: unknown, context: ResilienceContext, value: T): boolean {
    if (this.handlesResults) return false;
    if (this.reportsAttempts) {
      const ended = this.reportFirstValue(state as number | undefined, context, value);
      // The pipeline's end, when this is its outermost strategy (taken only then, see `offerTimestamp`).
      if (ended !== undefined) offerTimestamp(this, this.time, ended);
    }
    return true;
  }

  /**
   * The first attempt returned a value the default predicate never handles (nor a cancelled call's):
   * reported without entering the loop.
   */
  private reportFirstValue(started: number | undefined, context: ResilienceContext, value: T): number | undefined {
    const ended = started === undefined ? undefined : getTimestamp(this.time);
    this.telemetry.report('ExecutionAttempt', 'information', context, {
      outcome: outcomeFromValue(value),
      attemptNumber: 0,
      duration: ended === undefined ? 0 : ended - started!,
      handled: false,
    });
    return ended;
  }

  /** @internal The first attempt settled: retry it if it failed (or if its value is to be judged). */
  inlineResume(state: unknown, next: StrategyNext<T>, context: ResilienceContext, first: Promise<T>): Promise<T> {
    const started = state as number | undefined;
    return first.then(
      this.handlesResults ? (value) => this.loop(next, context, outcomeFromValue(value), started) : undefined,
      (error) => this.loop(next, context, outcomeFromError(error), started),
    );
  }

  /** `firstStarted`: when the first attempt started, if it ran inline (its outcome is `firstOutcome`). */
  private async loop(
    next: StrategyNext<T>,
    context: ResilienceContext,
    firstOutcome: Outcome<T> | undefined,
    firstStarted: number | undefined,
  ): Promise<T> {
    // Only decorrelated jitter keeps state between attempts; the other backoffs never touch it.
    const backoffState: BackoffState = this.backoffKeepsState ? { previous: 0 } : STATELESS_BACKOFF;
    const timed = this.timed;
    let attempt = 0;
    let pending = firstOutcome;
    try {
      for (;;) {
        context.attemptNumber = attempt;
        const started = !timed ? 0 : pending !== undefined ? (firstStarted ?? 0) : takeTimestamp(this, this.time);
        let outcome: Outcome<T>;
        if (pending !== undefined) {
          outcome = pending;
          pending = undefined;
        } else {
          try {
            outcome = outcomeFromValue(await next(context));
          } catch (error) {
            outcome = outcomeFromError(error);
          }
        }
        const duration = timed ? getTimestamp(this.time) - started : 0;

        const check = this.isHandled(outcome, context, attempt);
        const handled = typeof check === 'boolean' ? check : await check;
        // Stryker disable next-line ConditionalExpression: equivalent — an unwanted event reaches no listener
        if (this.reportsAttempts) {
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

        // The arguments object exists only for the callbacks that receive it.
        const args: RetryPredicateArguments<T> | undefined = this.needsRetryArguments
          ? { outcome, context, attemptNumber: attempt }
          : undefined;
        const delay = args
          ? await this.nextDelay(args, backoffState)
          : this.backoffDelay(outcome, attempt, backoffState);
        if (this.time.now() + delay >= context._deadline) {
          // The next attempt would start at or after the deadline (an enclosing timeout's, or the caller's),
          // so it could not finish: give the caller the real failure now.
          return this.giveUp(outcome, context, attempt, 'deadline');
        }

        if (this.options.onRetry) await this.options.onRetry({ ...args!, retryDelay: delay, duration });
        if (this.reportsRetries) {
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

  /** Whether to retry; a promise only when a user predicate returned one. */
  private isHandled(outcome: Outcome<T>, context: ResilienceContext, attempt: number): boolean | PromiseLike<boolean> {
    // Cancellation is never retried.
    if (context.isCancellationRequested || (!outcome.ok && isCancellation(outcome.error, context))) return false;
    if (!outcome.ok && !this.options.retryOnBrokenCircuit) {
      if (isBrokenCircuitError(outcome.error) || isIsolatedCircuitError(outcome.error)) return false;
    }
    // The default predicate (handleAllErrors), without building its arguments.
    // Stryker disable next-line ConditionalExpression: equivalent — `false` calls handleAllErrors, which decides the same
    if (!this.handlesResults) return !outcome.ok && !isCancellation(outcome.error);
    return this.shouldHandle({ outcome, context, attemptNumber: attempt });
  }

  /** The delay when no callback computes it: the server's Retry-After if honoured, else the backoff. */
  private backoffDelay(outcome: Outcome<T>, attempt: number, state: BackoffState): number {
    if (this.options.honorRetryAfter !== false && !outcome.ok) {
      // A finite, non-negative number or undefined.
      const serverWait = getRetryAfter(outcome.error);
      if (serverWait !== undefined) return clampDelay(serverWait, this.backoff.maxDelay);
    }
    return computeBackoffDelay(this.backoff, attempt, state, this.random);
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
    // Stryker disable next-line ConditionalExpression: equivalent — an unwanted event reaches no listener
    if (this.reportsGiveUps) {
      this.telemetry.report('OnRetryGiveUp', 'error', context, { outcome, attemptNumber: attempt, reason });
    }
    return unwrapOutcome(outcome);
  }
}
