import { LinkedCancellationScope } from '../context/cancellation.scope.js';
import type { ResilienceContext } from '../context/resilience.context.js';
import { unwrapOutcome, type Outcome } from '../outcome.model.js';
import { handleAllErrors } from '../outcome.predicates.js';
import type { ResilienceStrategy, StrategyBuilderContext, StrategyNext } from '../resilience-strategy.interface.js';
import type { StrategyTelemetry } from '../telemetry/strategy.telemetry.js';
import type { TimeProvider, TimerHandle } from '../time/time.provider.js';
import { settle } from '../utils/settle.util.js';
import { DEFAULT_HEDGING_DELAY, DEFAULT_MAX_HEDGED_ATTEMPTS, type HedgingStrategyOptions } from './hedging.options.js';

interface Attempt<T> {
  readonly attemptNumber: number;
  readonly scope: LinkedCancellationScope;
  readonly context: ResilienceContext;
  readonly started: number;
  outcome: Outcome<T> | undefined;
  settled: Promise<void>;
}

/**
 * Hedging (Polly v8 semantics): starts the primary attempt, then more attempts after `delay` (or at once,
 * or after failures); the first outcome that is not handled is accepted. Every attempt runs on a copy of
 * the context with its own signal; the accepted attempt's properties merge back into the caller's
 * context; every other attempt is aborted and awaited before the result returns.
 *
 * @internal
 */
export class HedgingStrategy<T> implements ResilienceStrategy<T> {
  private readonly maxHedged: number;
  private readonly time: TimeProvider;
  private readonly telemetry: StrategyTelemetry;
  private readonly shouldHandle: NonNullable<HedgingStrategyOptions<T>['shouldHandle']>;

  constructor(
    private readonly options: HedgingStrategyOptions<T>,
    context: StrategyBuilderContext,
  ) {
    this.maxHedged = options.maxHedgedAttempts ?? DEFAULT_MAX_HEDGED_ATTEMPTS;
    this.time = context.timeProvider;
    this.telemetry = context.telemetry;
    this.shouldHandle = options.shouldHandle ?? handleAllErrors;
  }

  async execute(next: StrategyNext<T>, context: ResilienceContext): Promise<T> {
    const attempts: Attempt<T>[] = [];
    const completed: Attempt<T>[] = [];
    let wake: (() => void) | undefined;
    let stopped = false; // the action generator declined, or the caller cancelled

    const start = (attemptNumber: number): boolean => {
      const scope = new LinkedCancellationScope(context._scope);
      const actionContext = context._fork(scope);
      actionContext.attemptNumber = attemptNumber;
      let action: StrategyNext<T> = next;
      if (attemptNumber > 0 && this.options.actionGenerator) {
        const generated = this.options.actionGenerator({
          primaryContext: context,
          actionContext,
          attemptNumber,
          callback: next,
        });
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
      const attempt: Attempt<T> = {
        attemptNumber,
        scope,
        context: actionContext,
        started: this.time.now(),
        outcome: undefined,
        settled: Promise.resolve(),
      };
      attempt.settled = settle(action(actionContext)).then((outcome) => {
        attempt.outcome = outcome;
        completed.push(attempt);
        wake?.();
      });
      attempts.push(attempt);
      return true;
    };

    const hedge = async (): Promise<boolean> => {
      if (stopped || attempts.length > this.maxHedged || context.isCancellationRequested) return false;
      const attemptNumber = attempts.length;
      if (!start(attemptNumber)) {
        stopped = true;
        return false;
      }
      const attempt = attempts[attempts.length - 1];
      this.telemetry.report('OnHedging', 'warning', context, { attemptNumber });
      if (this.options.onHedging) {
        await this.options.onHedging({ primaryContext: context, actionContext: attempt.context, attemptNumber });
      }
      return true;
    };

    const canHedge = () => !stopped && attempts.length <= this.maxHedged && !context.isCancellationRequested;

    // Wake the loop when the caller cancels, so it stops waiting for a delay.
    let callerSignal: AbortSignal | undefined;
    const onCallerAbort = (): void => wake?.();
    if (context._scope.canAbort) {
      callerSignal = context.signal;
      callerSignal.addEventListener('abort', onCallerAbort, { once: true });
    }

    let accepted: Attempt<T> | undefined;
    try {
      start(0);
      while (!accepted) {
        if (completed.length === 0) {
          const delay = canHedge() ? await this.delayFor(context, attempts.length) : -1;
          if (delay === 0 && canHedge()) {
            await hedge(); // parallel mode: start the next one at once
            continue;
          }
          let timer: TimerHandle;
          let timedOut = false;
          await new Promise<void>((resolve) => {
            wake = resolve;
            if (completed.length > 0) resolve();
            else if (delay > 0 && canHedge()) {
              timer = this.time.setTimeout(() => {
                timedOut = true;
                resolve();
              }, delay);
            }
          });
          wake = undefined;
          if (timer !== undefined) this.time.clearTimeout(timer);
          if (timedOut && completed.length === 0) {
            await hedge();
            continue;
          }
        }
        while (completed.length > 0 && !accepted) {
          const attempt = completed.shift()!;
          const handled = await this.isHandled(attempt, context);
          if (!handled) accepted = attempt;
          else if (canHedge()) await hedge(); // a failure lets the next hedge start at once
        }
        if (!accepted && attempts.every((a) => a.outcome !== undefined) && !canHedge()) {
          accepted = attempts[0]; // every attempt failed: the primary's outcome
        }
      }
    } finally {
      callerSignal?.removeEventListener('abort', onCallerAbort);
      for (const attempt of attempts) {
        if (attempt !== accepted && attempt.outcome === undefined) {
          attempt.scope.abort(new DOMException('Another hedged attempt was accepted.', 'AbortError'));
        }
      }
      await Promise.all(attempts.map((a) => a.settled));
      for (const attempt of attempts) attempt.scope.dispose();
    }
    const winner = accepted!;
    if (winner.context.hasProperties) context.properties.addOrReplace(winner.context.properties);
    return unwrapOutcome(winner.outcome!);
  }

  private async delayFor(context: ResilienceContext, attemptNumber: number): Promise<number> {
    const generator = this.options.delayGenerator;
    const delay = generator
      ? await generator({ context, attemptNumber })
      : (this.options.delay ?? DEFAULT_HEDGING_DELAY);
    return Number.isNaN(delay) ? DEFAULT_HEDGING_DELAY : delay;
  }

  private async isHandled(attempt: Attempt<T>, primary: ResilienceContext): Promise<boolean> {
    const outcome = attempt.outcome!;
    const handled =
      !(primary.isCancellationRequested && !outcome.ok) &&
      (await this.shouldHandle({ outcome, context: attempt.context }));
    if (this.telemetry.enabled) {
      this.telemetry.report('ExecutionAttempt', handled ? 'warning' : 'information', attempt.context, {
        outcome,
        attemptNumber: attempt.attemptNumber,
        duration: this.time.now() - attempt.started,
        handled,
      });
    }
    return handled;
  }
}
