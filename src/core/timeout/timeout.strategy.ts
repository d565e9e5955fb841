import { LinkedCancellationScope } from '../context/cancellation.scope.js';
import type { ResilienceContext } from '../context/resilience.context.js';
import type { ResilienceStrategy, StrategyBuilderContext, StrategyNext } from '../resilience-strategy.interface.js';
import { isCancellationError, TimeoutRejectedError } from '../resilience.errors.js';
import type { StrategyTelemetry } from '../telemetry/strategy.telemetry.js';
import type { TimeProvider } from '../time/time.provider.js';
import { MAX_TIMER_DELAY } from '../utils/options.validation.js';
import { DEFAULT_TIMEOUT, type TimeoutStrategyOptions } from './timeout.options.js';

/**
 * Cancels the inner call after a timeout through the context's signal. The timer and the link to the
 * caller's signal are released on every path; the signal itself is only created if somebody reads it.
 *
 * @internal
 */
export class TimeoutStrategy<T> implements ResilienceStrategy<T> {
  private readonly timeout: number;
  private readonly time: TimeProvider;
  private readonly telemetry: StrategyTelemetry;
  private readonly aggressive: boolean;

  constructor(
    private readonly options: TimeoutStrategyOptions,
    context: StrategyBuilderContext,
  ) {
    this.timeout = options.timeout ?? DEFAULT_TIMEOUT;
    this.time = context.timeProvider;
    this.telemetry = context.telemetry;
    this.aggressive = options.mode === 'aggressive';
  }

  execute(next: StrategyNext<T>, context: ResilienceContext): Promise<T> {
    const generator = this.options.timeoutGenerator;
    if (generator) {
      let generated: number | undefined | PromiseLike<number | undefined>;
      try {
        generated = generator({ context });
      } catch (error) {
        return Promise.reject(error);
      }
      return Promise.resolve(generated).then((timeout) => this.run(next, context, timeout ?? 0));
    }
    return this.run(next, context, this.timeout);
  }

  private run(next: StrategyNext<T>, context: ResilienceContext, timeout: number): Promise<T> {
    if (!(timeout > 0)) return next(context);
    timeout = Math.min(timeout, MAX_TIMER_DELAY);
    return this.aggressive ? this.runAggressive(next, context, timeout) : this.runCooperative(next, context, timeout);
  }

  private runCooperative(next: StrategyNext<T>, context: ResilienceContext, timeout: number): Promise<T> {
    const parentScope = context._scope;
    const parentDeadline = context._deadline;
    const scope = new LinkedCancellationScope(parentScope);
    const handle = this.time.setTimeout(() => scope.abort(timeoutReason(timeout)), timeout);
    context._scope = scope;
    context._deadline = Math.min(parentDeadline, this.time.now() + timeout);
    const release = (): void => {
      this.time.clearTimeout(handle);
      scope.dispose();
      context._scope = parentScope;
      context._deadline = parentDeadline;
    };
    return next(context).then(
      (value) => {
        release();
        return value;
      },
      (error: unknown) => {
        release();
        if (!scope.abortedHere || parentScope.aborted || !isTimeoutFault(error, scope.reason)) throw error;
        return this.rejected(context, timeout, error);
      },
    );
  }

  private runAggressive(next: StrategyNext<T>, context: ResilienceContext, timeout: number): Promise<T> {
    // The inner call may outlive this strategy, so it runs on its own copy of the context.
    const scope = new LinkedCancellationScope(context._scope);
    const inner = context._fork(scope);
    inner._deadline = Math.min(context._deadline, this.time.now() + timeout);
    return new Promise<T>((resolve, reject) => {
      let settled = false;
      const handle = this.time.setTimeout(() => {
        settled = true;
        const reason = timeoutReason(timeout);
        scope.abort(reason);
        scope.dispose();
        this.rejected(context, timeout, reason).then(resolve, reject);
      }, timeout);
      const finish = (): boolean => {
        if (settled) return false;
        settled = true;
        this.time.clearTimeout(handle);
        scope.dispose();
        if (inner.hasProperties) context.properties.addOrReplace(inner.properties);
        return true;
      };
      next(inner).then(
        (value) => {
          if (finish()) resolve(value);
        },
        (error: unknown) => {
          // After the deadline the late failure is discarded (and thereby handled).
          if (finish()) reject(error);
        },
      );
    });
  }

  private async rejected(context: ResilienceContext, timeout: number, cause: unknown): Promise<never> {
    const error = new TimeoutRejectedError(timeout, { cause });
    error.source = {
      pipelineName: this.telemetry.source.pipelineName,
      strategyName: this.telemetry.source.strategyName,
    };
    this.telemetry.report('OnTimeout', 'error', context, { timeout });
    if (this.options.onTimeout) await this.options.onTimeout({ context, timeout });
    throw error;
  }
}

function timeoutReason(timeout: number): DOMException {
  return new DOMException(`The operation timed out after ${timeout} ms.`, 'TimeoutError');
}

/** The outcome was caused by our abort: the abort reason itself, or an abort/timeout error. */
function isTimeoutFault(error: unknown, reason: unknown): boolean {
  return (
    error === reason ||
    isCancellationError(error) ||
    (typeof error === 'object' && error !== null && (error as { name?: unknown }).name === 'TimeoutError')
  );
}
