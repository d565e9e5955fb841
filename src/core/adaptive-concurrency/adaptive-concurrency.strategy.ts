import { isCancellation } from '../outcome/cancellation.rule.js';
import { getCriticality } from '../context/criticality.property.js';
import type { ResilienceContext } from '../context/resilience.context.js';
import type {
  ResilienceStrategy,
  StrategyBuilderContext,
  StrategyNext,
  StrategyPorts,
} from '../strategy/resilience-strategy.interface.js';
import {
  createLightweightError,
  isRateLimiterRejectedError,
  isTimeoutRejectedError,
  RateLimiterRejectedError,
  type RateLimiterRejectionReason,
} from '../resilience.errors.js';
import type { StrategyTelemetry } from '../telemetry/strategy.telemetry.js';
import { getElapsedTime, getTimestamp, type TimeProvider } from '../time/time.provider.js';
import type { QueueEntry } from '../rate-limiter/limiters/waiter.queue.js';
import { captureSettlers, settlers } from '../utils/settle.util.js';
import { AdaptiveConcurrencyLimiter } from './adaptive-concurrency.limiter.js';
import type { AdaptiveConcurrencyOptions, AdaptiveLimitChangedArguments } from './adaptive-concurrency.options.js';

declare module '../telemetry/resilience-event.model.js' {
  interface ResilienceEventMap {
    /** The adaptive concurrency limit moved (rounded down, it changed). */
    OnAdaptiveLimitChanged: AdaptiveLimitChangedArguments;
  }
}

/** The default drop test: timeouts and limiter rejections from further in. */
function isOverloadFailure(error: unknown): boolean {
  return isTimeoutRejectedError(error) || isRateLimiterRejectedError(error);
}

/**
 * Runs each call holding a permit of its `AdaptiveConcurrencyLimiter`, measures it with the pipeline
 * clock's high-resolution timestamp, and gives the permit back with the measurement however the call
 * ends (a cancelled call is not measured).
 *
 * @internal
 */
export class AdaptiveConcurrencyStrategy<T> implements ResilienceStrategy<T> {
  readonly limiter: AdaptiveConcurrencyLimiter;
  readonly ports: StrategyPorts;
  private readonly telemetry: StrategyTelemetry;
  /** @internal */
  readonly time: TimeProvider;
  private readonly isDropped: (error: unknown) => boolean;

  constructor(
    private readonly options: AdaptiveConcurrencyOptions,
    context: StrategyBuilderContext,
  ) {
    this.time = context.timeProvider;
    this.telemetry = context.telemetry;
    this.isDropped = options.isDropped ?? isOverloadFailure;
    this.limiter = new AdaptiveConcurrencyLimiter(options, this.time);
    this.limiter.onLimitChanged = (args, callContext) => {
      this.telemetry.report('OnAdaptiveLimitChanged', 'information', callContext, args);
      options.onLimitChanged?.(args);
    };
    this.ports = { limiter: this.limiter };
  }

  execute(next: StrategyNext<T>, context: ResilienceContext): Promise<T> {
    if (context._scope.aborted) return Promise.reject(context._scope.reason); // a caller cancelled already
    const limiter = this.limiter;
    const criticality = getCriticality(context);
    if (limiter.tryTake(criticality)) return this.run(next, context);
    if (!limiter.makeQueueRoom(criticality)) return this.reject(context, limiter.reject(criticality));
    // A queued call is one object and one promise, started by the permit handed to it: no closures.
    const promise = new Promise<T>(captureSettlers);
    limiter.enqueue(
      context,
      new QueuedAdaptiveCall<T>(this, next, context, settlers.resolve as (value: T) => void, settlers.reject!),
      criticality,
    );
    return promise;
  }

  dispose(): void {
    this.limiter.dispose();
  }

  /** Runs the call holding a permit and gives it back with the call's round-trip time. */
  private run(next: StrategyNext<T>, context: ResilienceContext): Promise<T> {
    const start = getTimestamp(this.time);
    // `next` never throws synchronously (a pipeline's steps turn a throw into a rejection).
    return next(context).then(
      (value) => {
        this.succeeded(context, start);
        return value;
      },
      (error: unknown) => {
        this.failed(context, start, error);
        throw error;
      },
    );
  }

  /** Gives the permit of a call that succeeded back, with its round-trip time. @internal */
  succeeded(context: ResilienceContext, start: number): void {
    this.release(context, getTimestamp(this.time), start, false);
  }

  /** Gives the permit of a failed call back: measured unless cancelled, a drop when `isDropped` says. @internal */
  failed(context: ResilienceContext, start: number, error: unknown): void {
    const cancelled = context._scope.aborted || isCancellation(error);
    // A drop predicate that throws still gives the permit back (its error becomes the outcome).
    let dropped = false;
    try {
      dropped = !cancelled && this.isDropped(error);
    } finally {
      this.release(context, cancelled ? undefined : getTimestamp(this.time), start, dropped);
    }
  }

  /**
   * The timestamp of the release being handled, if it read one: the permit it hands to a queued call
   * starts that call at the same instant, so the clock is read once for both (`handoverTimestamp`).
   * NaN when there is none (a number field is updated in place; `undefined` would box every number).
   */
  private releasedAt = NaN;

  /** The timestamp a call granted now starts at: the releasing call's end when there is one. @internal */
  handoverTimestamp(): number {
    const releasedAt = this.releasedAt;
    return Number.isNaN(releasedAt) ? getTimestamp(this.time) : releasedAt;
  }

  private release(context: ResilienceContext, end: number | undefined, start: number, dropped: boolean): void {
    this.releasedAt = end ?? NaN;
    try {
      this.limiter.release(context, end === undefined ? undefined : getElapsedTime(this.time, start, end), dropped);
    } finally {
      this.releasedAt = NaN;
    }
  }

  /** Rejects a queued call that gave its place to a more critical one. @internal */
  shed(context: ResilienceContext): Promise<never> {
    this.limiter.countShed();
    return this.reject(context, 'shed');
  }

  private reject(context: ResilienceContext, reason: RateLimiterRejectionReason): Promise<never> {
    const limit = this.limiter.limit;
    this.telemetry.report('OnRateLimiterRejected', 'error', context, { retryAfter: undefined, reason });
    try {
      this.options.onRejected?.({ context, reason, limit });
    } catch (error) {
      return Promise.reject(error);
    }
    return Promise.reject(
      createLightweightError(
        RateLimiterRejectedError,
        reason === 'shed'
          ? `The operation was shed by the adaptive concurrency limiter (limit ${limit}).`
          : `The operation was rejected by the adaptive concurrency limiter (limit ${limit}).`,
        { reason, source: { pipelineName: this.telemetry.source.pipelineName, strategyName: this.options.name } },
      ),
    );
  }
}

/**
 * A call waiting for an adaptive permit: one object per queued call. Granted, it runs and settles the
 * caller's promise itself (one reaction, its two callbacks made with the object).
 */
class QueuedAdaptiveCall<T> implements QueueEntry {
  private start = 0;

  constructor(
    private readonly strategy: AdaptiveConcurrencyStrategy<T>,
    private readonly next: StrategyNext<T>,
    private readonly context: ResilienceContext,
    private readonly resolve: (value: T) => void,
    readonly cancel: (reason: unknown) => void,
  ) {}

  grant(): void {
    this.start = this.strategy.handoverTimestamp();
    // Bound methods: two small objects, where arrow functions would add a closure context.
    this.next(this.context).then(this.succeeded.bind(this), this.failed.bind(this));
  }

  shed(): void {
    this.strategy.shed(this.context).then(this.resolve, this.cancel);
  }

  private succeeded(value: T): void {
    this.strategy.succeeded(this.context, this.start);
    this.resolve(value);
  }

  private failed(error: unknown): void {
    try {
      this.strategy.failed(this.context, this.start, error);
    } catch (thrown) {
      this.cancel(thrown); // the drop predicate threw: its error is the outcome, as on the direct path
      return;
    }
    this.cancel(error);
  }
}
