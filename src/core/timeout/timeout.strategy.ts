import { LinkedCancellationScope, type CancellationScope } from '../context/cancellation.scope.js';
import type { ResilienceContext } from '../context/resilience.context.js';
import type { InlineStrategy } from '../strategy/inline-strategy.interface.js';
import type {
  ResilienceStrategy,
  StrategyBuilderContext,
  StrategyNext,
} from '../strategy/resilience-strategy.interface.js';
import { isCancellation } from '../outcome/cancellation.rule.js';
import { TimeoutRejectedError } from '../resilience.errors.js';
import type { StrategyTelemetry } from '../telemetry/strategy.telemetry.js';
import type { TimerHandle } from '../time/time.provider.js';
import { MAX_TIMER_DELAY } from '../strategy/options.validation.js';
import { captureSettlers, settlers } from '../utils/settle.util.js';
import {
  FifoDeadlineQueue,
  TimerPerCallDeadlineQueue,
  type DeadlineEntry,
  type DeadlineQueue,
} from './deadline.queue.js';
import { DEFAULT_TIMEOUT, type TimeoutStrategyOptions } from './timeout.options.js';

/**
 * Cancels the inner call after a timeout through the context's signal. A fixed timeout puts each call's
 * deadline in one FIFO served by one shared timer, so a call that succeeds sets no timer of its own; a
 * timeout generator gives each call its own timer. The deadline and the link to the caller's signal are
 * released on every path; the signal itself is only created if somebody reads it.
 *
 * @internal
 */
export class TimeoutStrategy<T> implements ResilienceStrategy<T>, InlineStrategy<T> {
  private readonly timeout: number;
  private readonly deadlines: DeadlineQueue;
  private readonly telemetry: StrategyTelemetry;
  private readonly aggressive: boolean;

  constructor(
    private readonly options: TimeoutStrategyOptions,
    context: StrategyBuilderContext,
  ) {
    this.timeout = Math.min(options.timeout ?? DEFAULT_TIMEOUT, MAX_TIMER_DELAY);
    this.telemetry = context.telemetry;
    this.aggressive = options.mode === 'aggressive';
    this.deadlines = options.timeoutGenerator
      ? new TimerPerCallDeadlineQueue(context.timeProvider)
      : new FifoDeadlineQueue(context.timeProvider);
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
    return this.aggressive
      ? this.runAggressive(next, context, this.timeout)
      : this.runCooperative(next, context, this.timeout);
  }

  /**
   * @internal A fixed cooperative timeout runs inline: its call is entered here and released on exit. An
   * aggressive timeout (it settles the call itself, early) and a generated one take the call whole.
   */
  inlineEnter(context: ResilienceContext, next: StrategyNext<T>): unknown {
    if (this.options.timeoutGenerator) return this.execute(next, context);
    if (!this.aggressive) return this.enterCooperative(context, this.timeout);
    // The callback's outcome settles the call's promise directly (no closures); the run's exit does the
    // bookkeeping that `fulfilled`/`failed` do on the full path (`inlineExitValue`, `inlineResume`).
    const call = this.enterAggressive(context, this.timeout);
    // After the deadline, a late outcome meets a settled promise and is discarded (and thereby handled).
    next(call.inner).then(call.resolve, call.reject);
    return call;
  }

  /** @internal An aggressive call settles on its own (early, at the deadline): the run continues from its promise. */
  inlineResult(call: unknown): Promise<T> | undefined {
    return call instanceof AggressiveCall ? (call as AggressiveCall<T>).promise : undefined;
  }

  /** @internal */
  inlineExitValue(call: unknown): boolean {
    if (call instanceof AggressiveCall) (call as AggressiveCall<T>).finish();
    else (call as CooperativeCall<T>).release();
    return true;
  }

  /** @internal */
  inlineResume(call: unknown, _next: StrategyNext<T>, _context: ResilienceContext, inner: Promise<T>): Promise<T> {
    if (!(call instanceof AggressiveCall)) return this.afterCooperative(call as CooperativeCall<T>, inner);
    return inner.then(undefined, (error: unknown) => {
      (call as AggressiveCall<T>).finish();
      throw error;
    });
  }

  private run(next: StrategyNext<T>, context: ResilienceContext, timeout: number): Promise<T> {
    if (!(timeout > 0)) return next(context);
    timeout = Math.min(timeout, MAX_TIMER_DELAY);
    return this.aggressive ? this.runAggressive(next, context, timeout) : this.runCooperative(next, context, timeout);
  }

  private runCooperative(next: StrategyNext<T>, context: ResilienceContext, timeout: number): Promise<T> {
    const call = this.enterCooperative(context, timeout);
    return this.afterCooperative(call, next(context));
  }

  /** Queues the call's deadline and puts the inner pipeline under its scope. */
  private enterCooperative(context: ResilienceContext, timeout: number): CooperativeCall<T> {
    const call = new CooperativeCall<T>(this, context, timeout);
    const deadline = this.deadlines.add(call, timeout);
    context._scope = call;
    context._deadline = Math.min(deadline, context._deadline);
    return call;
  }

  private afterCooperative(call: CooperativeCall<T>, inner: Promise<T>): Promise<T> {
    return inner.then(
      (value) => {
        call.release();
        return value;
      },
      (error: unknown) => call.failed(error),
    );
  }

  private runAggressive(next: StrategyNext<T>, context: ResilienceContext, timeout: number): Promise<T> {
    const call = this.enterAggressive(context, timeout);
    next(call.inner).then(
      (value) => call.fulfilled(value),
      (error: unknown) => call.failed(error),
    );
    return call.promise;
  }

  /**
   * Queues an aggressive call's deadline and makes its promise. The inner call may outlive this
   * strategy, so it runs on its own copy of the context (`call.inner`).
   */
  private enterAggressive(context: ResilienceContext, timeout: number): AggressiveCall<T> {
    const call = new AggressiveCall<T>(this, context, timeout);
    const inner = context._fork(call);
    inner._deadline = Math.min(this.deadlines.add(call, timeout), inner._deadline);
    call.promise = new Promise<T>(captureSettlers);
    call.resolve = settlers.resolve as (value: T) => void;
    call.reject = settlers.reject!;
    call.inner = inner;
    return call;
  }

  /** @internal Takes a call's deadline out of the queue. */
  release(entry: DeadlineEntry): void {
    this.deadlines.remove(entry);
  }

  /** @internal Reports the timeout and builds the error the caller sees. */
  async rejected(context: ResilienceContext, timeout: number, cause: unknown): Promise<never> {
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

/**
 * One call under a timeout: the cancellation scope the inner pipeline runs under, and the entry of its
 * deadline. Everything a call needs lives in this one object.
 */
abstract class TimedCall<T> extends LinkedCancellationScope implements DeadlineEntry {
  deadline = 0;
  previousEntry: DeadlineEntry | undefined = undefined;
  nextEntry: DeadlineEntry | undefined = undefined;
  // Stryker disable next-line BooleanLiteral: equivalent — the queue sets `queued` when it takes the entry, before anything reads it (the initial value keeps the object's shape stable)
  queued = false;
  timer: TimerHandle = undefined;

  constructor(
    protected readonly strategy: TimeoutStrategy<T>,
    protected readonly context: ResilienceContext,
    protected readonly timeout: number,
    parent: CancellationScope,
  ) {
    super(parent);
  }

  abstract onDeadline(): void;
}

/** Cooperative: the deadline aborts the signal; the strategy waits for the callback to finish. */
class CooperativeCall<T> extends TimedCall<T> {
  private readonly parentScope: CancellationScope;
  private readonly parentDeadline: number;

  constructor(strategy: TimeoutStrategy<T>, context: ResilienceContext, timeout: number) {
    super(strategy, context, timeout, context._scope);
    this.parentScope = context._scope;
    this.parentDeadline = context._deadline;
  }

  onDeadline(): void {
    this.abort(timeoutReason(this.timeout));
  }

  release(): void {
    this.strategy.release(this);
    this.dispose();
    this.context._scope = this.parentScope;
    this.context._deadline = this.parentDeadline;
  }

  failed(error: unknown): Promise<never> {
    this.release();
    if (!this.abortedHere || this.parentScope.aborted || !isTimeoutFault(error)) throw error;
    return this.strategy.rejected(this.context, this.timeout, error);
  }
}

/** Aggressive: the deadline rejects the call at once; a late outcome of the callback is discarded. */
class AggressiveCall<T> extends TimedCall<T> {
  resolve!: (value: T) => void;
  reject!: (reason: unknown) => void;
  inner!: ResilienceContext;
  /** Settles with the callback's outcome, or at the deadline with the timeout. */
  promise!: Promise<T>;
  private timedOut = false;

  constructor(strategy: TimeoutStrategy<T>, context: ResilienceContext, timeout: number) {
    super(strategy, context, timeout, context._scope);
  }

  onDeadline(): void {
    this.timedOut = true;
    const reason = timeoutReason(this.timeout);
    this.abort(reason);
    this.dispose();
    // Resolving with the rejection locks the call's promise now: a value arriving while onTimeout runs is
    // discarded (inside an inline run the callback's outcome reaches the resolvers directly).
    (this.resolve as (value: Promise<never>) => void)(this.strategy.rejected(this.context, this.timeout, reason));
  }

  // After the deadline the call's promise is locked: a late value or failure is discarded (and thereby handled).
  fulfilled(value: T): void {
    if (this.finishedCleanly()) this.resolve(value);
  }

  failed(error: unknown): void {
    if (this.finishedCleanly()) this.reject(error);
  }

  /**
   * Finishes the call; a clock that throws when the deadline is released fails the call with that error
   * (as in cooperative mode) instead of leaving it unsettled, and gives false.
   */
  private finishedCleanly(): boolean {
    try {
      this.finish();
      return true;
    } catch (error) {
      this.reject(error);
      // Stryker disable next-line BooleanLiteral: equivalent — the call has failed already; settling it again changes nothing
      return false;
    }
  }

  /** Releases the deadline and keeps the inner properties, if the call ended before its deadline. */
  finish(): void {
    if (this.timedOut) return;
    this.strategy.release(this);
    this.dispose();
    // Stryker disable next-line ConditionalExpression: equivalent for `true` — copying an empty bag changes nothing; the check saves creating two bags
    if (this.inner.hasProperties) this.context.properties.addOrReplace(this.inner.properties);
  }
}

function timeoutReason(timeout: number): DOMException {
  return new DOMException(`The operation timed out after ${timeout} ms.`, 'TimeoutError');
}

/** The outcome was caused by our abort: the abort reason itself (a `TimeoutError`), or an abort/timeout error. */
function isTimeoutFault(error: unknown): boolean {
  return (
    isCancellation(error) ||
    (typeof error === 'object' && error !== null && (error as { name?: unknown }).name === 'TimeoutError')
  );
}
