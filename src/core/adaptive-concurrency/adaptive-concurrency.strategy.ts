import { getCriticality } from '../context/criticality.property.js';
import type { ResilienceContext } from '../context/resilience.context.js';
import type {
  ResilienceStrategy,
  StrategyBuilderContext,
  StrategyNext,
  StrategyPorts,
} from '../resilience-strategy.interface.js';
import {
  createLightweightError,
  isCancellationError,
  isRateLimiterRejectedError,
  isTimeoutRejectedError,
  RateLimiterRejectedError,
  type RateLimiterRejectionReason,
} from '../resilience.errors.js';
import type { StrategyTelemetry } from '../telemetry/strategy.telemetry.js';
import { getElapsedTime, getTimestamp, type TimeProvider } from '../time/time.provider.js';
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
  private readonly time: TimeProvider;
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
    return new Promise<T>((resolve, reject) =>
      limiter.enqueue(
        context,
        {
          grant: () => void this.run(next, context).then(resolve, reject),
          cancel: reject,
          shed: () => {
            limiter.countShed();
            this.reject(context, 'shed').then(resolve, reject);
          },
        },
        criticality,
      ),
    );
  }

  dispose(): void {
    this.limiter.dispose();
  }

  /** Runs the call holding a permit and gives it back with the call's round-trip time. */
  private run(next: StrategyNext<T>, context: ResilienceContext): Promise<T> {
    const start = getTimestamp(this.time);
    return next(context).then(
      (value) => {
        this.limiter.release(context, getElapsedTime(this.time, start), false);
        return value;
      },
      (error: unknown) => {
        const cancelled = context._scope.aborted || isCancellationError(error);
        this.limiter.release(
          context,
          cancelled ? undefined : getElapsedTime(this.time, start),
          !cancelled && this.isDropped(error),
        );
        throw error;
      },
    );
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
