import { LinkedCancellationScope } from '../context/cancellation.scope.js';
import type { ResilienceContext } from '../context/resilience.context.js';
import { unwrapOutcome, type Outcome } from '../outcome/outcome.model.js';
import type { StrategyNext } from '../strategy/resilience-strategy.interface.js';
import type { StrategyTelemetry } from '../telemetry/strategy.telemetry.js';
import { getTimestamp, type TimeProvider, type TimerHandle } from '../time/time.provider.js';
import { settle } from '../utils/settle.util.js';
import type { HedgingStrategyOptions } from './hedging.options.js';

/** One attempt of a hedged call. @internal */
export interface HedgedAttempt<T> {
  readonly attemptNumber: number;
  readonly scope: LinkedCancellationScope;
  readonly context: ResilienceContext;
  /** When the attempt started (`getTimestamp`), if attempts are timed; else 0. */
  readonly started: number;
  outcome: Outcome<T> | undefined;
  settled: Promise<void>;
}

/** What one hedged call runs by: the strategy's options and decisions. @internal */
export interface HedgingPolicy<T> {
  readonly options: HedgingStrategyOptions<T>;
  readonly maxHedged: number;
  readonly time: TimeProvider;
  readonly telemetry: StrategyTelemetry;
  /** Attempts are timed (some listener wants `ExecutionAttempt`). */
  readonly timesAttempts: boolean;
  /** Milliseconds before the next hedge: > 0 waits, 0 starts it at once, < 0 only after a failure. */
  delayFor(context: ResilienceContext, attemptNumber: number): Promise<number>;
  /** Whether an attempt's outcome is handled (another attempt may win instead); reports the attempt. */
  isHandled(attempt: HedgedAttempt<T>, primary: ResilienceContext): Promise<boolean>;
}

/**
 * One hedged call: starts the primary attempt, then more attempts after the delay (or at once, or after
 * failures), accepts the first outcome that is not handled, and cancels and awaits every other attempt
 * before it returns.
 *
 * @internal
 */
export class HedgingExecution<T> {
  private readonly attempts: HedgedAttempt<T>[] = [];
  /** Attempts that have settled and are not yet judged, in the order they settled. */
  private readonly completed: HedgedAttempt<T>[] = [];
  private accepted: HedgedAttempt<T> | undefined;
  /** Ends the current wait: an attempt settled, or the caller cancelled. */
  private wake: (() => void) | undefined;
  /** The action generator declined to start another attempt. */
  private stopped = false;
  private callerSignal: AbortSignal | undefined;
  private readonly onCallerAbort = (): void => this.wake?.();

  constructor(
    private readonly policy: HedgingPolicy<T>,
    private readonly next: StrategyNext<T>,
    private readonly context: ResilienceContext,
  ) {}

  // The steps are awaited inline, never through another async function: the order in which attempts
  // start and settle (parallel mode starts them all before the first can settle) depends on it.
  async run(): Promise<T> {
    this.listenToCaller();
    try {
      this.start(0);
      while (!this.accepted) {
        if (this.completed.length === 0) {
          // Stryker disable next-line UnaryOperator: equivalent — with no hedge allowed, waitForAttempt sets no timer for any delay
          const delay = this.canHedge() ? await this.policy.delayFor(this.context, this.attempts.length) : -1;
          if (delay === 0 && this.canHedge()) {
            await this.hedge(); // parallel mode: start the next one at once
            continue;
          }
          // The timer fired, so a hedge was allowed when it was set, and nothing since can forbid it: the
          // caller's cancellation ends the wait without it.
          const timedOut = await this.waitForAttempt(delay);
          if (timedOut && this.completed.length === 0) {
            await this.hedge();
            continue;
          }
        }
        while (this.completed.length > 0 && !this.accepted) {
          const attempt = this.completed.shift()!;
          if (!(await this.policy.isHandled(attempt, this.context))) this.accepted = attempt;
          else if (this.canHedge()) await this.hedge(); // a failure lets the next hedge start at once
        }
        this.acceptPrimaryWhenAllFailed();
      }
    } finally {
      this.abortTheOthers();
      await Promise.all(this.attempts.map((a) => a.settled));
      for (const attempt of this.attempts) attempt.scope.dispose();
    }
    return this.result();
  }

  /** Wakes the loop when the caller cancels, so it stops waiting for a delay. */
  private listenToCaller(): void {
    // Stryker disable next-line ConditionalExpression: equivalent as true — a context that cannot abort gets a signal that never fires; this only skips allocating it
    if (this.context._scope.canAbort) {
      this.callerSignal = this.context.signal;
      // Stryker disable next-line ObjectLiteral,BooleanLiteral: equivalent — the listener is removed when the call ends, and an abort fires once
      this.callerSignal.addEventListener('abort', this.onCallerAbort, { once: true });
    }
  }

  /** Starts attempt `attemptNumber` on a fork of the context; false when the action generator declines. */
  private start(attemptNumber: number): boolean {
    const { context, next } = this;
    const scope = new LinkedCancellationScope(context._scope);
    const actionContext = context._fork(scope);
    actionContext.attemptNumber = attemptNumber;
    let action: StrategyNext<T> = next;
    const generator = this.policy.options.actionGenerator;
    if (attemptNumber > 0 && generator) {
      const generated = generator({ primaryContext: context, actionContext, attemptNumber, callback: next });
      if (!generated) {
        scope.dispose();
        return false;
      }
      action = (ctx) => {
        try {
          return Promise.resolve(generated(ctx));
        } catch (error) {
          return Promise.reject(error);
        }
      };
    }
    const attempt: HedgedAttempt<T> = {
      attemptNumber,
      scope,
      context: actionContext,
      started: this.policy.timesAttempts ? getTimestamp(this.policy.time) : 0,
      outcome: undefined,
      settled: Promise.resolve(),
    };
    attempt.settled = settle(action(actionContext)).then((outcome) => {
      attempt.outcome = outcome;
      this.completed.push(attempt);
      this.wake?.();
    });
    this.attempts.push(attempt);
    return true;
  }

  private canHedge(): boolean {
    return !this.stopped && this.attempts.length <= this.policy.maxHedged && !this.context.isCancellationRequested;
  }

  /** Starts the next attempt (the caller checked `canHedge`) and reports it. */
  private async hedge(): Promise<void> {
    const attemptNumber = this.attempts.length;
    if (!this.start(attemptNumber)) {
      this.stopped = true;
      return;
    }
    const attempt = this.attempts[this.attempts.length - 1];
    this.policy.telemetry.report('OnHedging', 'warning', this.context, { attemptNumber });
    const onHedging = this.policy.options.onHedging;
    if (onHedging) await onHedging({ primaryContext: this.context, actionContext: attempt.context, attemptNumber });
  }

  /**
   * Waits until an attempt settles, the caller cancels, or `delay` (> 0) passes while another attempt
   * may start; resolves with whether the delay passed.
   */
  private waitForAttempt(delay: number): Promise<boolean> {
    const time = this.policy.time;
    return new Promise<boolean>((resolve) => {
      let timer: TimerHandle;
      const done = (timedOut: boolean): void => {
        this.wake = undefined;
        if (timer !== undefined) time.clearTimeout(timer);
        resolve(timedOut);
      };
      this.wake = () => done(false);
      if (this.completed.length > 0) {
        // Stryker disable next-line BooleanLiteral: equivalent — a settled attempt waiting to be judged is judged before any hedge, timed out or not
        done(false);
        return;
      }
      // Stryker disable next-line EqualityOperator: equivalent — a delay of 0 only gets here when no hedge is allowed
      if (delay > 0 && this.canHedge()) timer = time.setTimeout(() => done(true), delay);
    });
  }

  /** Every attempt failed and no more may start: the primary's outcome stands. */
  private acceptPrimaryWhenAllFailed(): void {
    if (!this.accepted && this.attempts.every((a) => a.outcome !== undefined) && !this.canHedge()) {
      this.accepted = this.attempts[0];
    }
  }

  /**
   * Stops listening to the caller and aborts every attempt still running. The accepted one has settled,
   * and is never aborted: it may still be reading its response.
   */
  private abortTheOthers(): void {
    this.callerSignal?.removeEventListener('abort', this.onCallerAbort);
    for (const attempt of this.attempts) {
      if (attempt.outcome === undefined) {
        attempt.scope.abort(new DOMException('Another hedged attempt was accepted.', 'AbortError'));
      }
    }
  }

  /** The accepted attempt's outcome; its properties merge back into the caller's context. */
  private result(): T {
    const winner = this.accepted!;
    // Stryker disable next-line ConditionalExpression: equivalent as true — merging no properties changes nothing; this only skips allocating an empty set
    if (winner.context.hasProperties) this.context.properties.addOrReplace(winner.context.properties);
    return unwrapOutcome(winner.outcome!);
  }
}
