import type { ResilienceContext } from '../context/resilience.context.js';
import type {
  ResilienceStrategy,
  StrategyBuilderContext,
  StrategyNext,
  StrategyPorts,
} from '../strategy/resilience-strategy.interface.js';
import { getCriticality } from '../context/criticality.property.js';
import {
  createLightweightError,
  RateLimiterRejectedError,
  type RateLimiterRejectionReason,
} from '../resilience.errors.js';
import type { StrategyTelemetry } from '../telemetry/strategy.telemetry.js';
import { isThenable } from '../utils/is-thenable.util.js';
import { captureSettlers, settlers } from '../utils/settle.util.js';
import { ConcurrencyLimiter } from './limiters/concurrency.limiter.js';
import type { QueueEntry } from './limiters/waiter.queue.js';
import { releaseNothing, type RateLimiter, type RateLimitLease } from './limiters/rate-limiter.model.js';
import { limiterFromOptions, type RateLimiterStrategyOptions } from './rate-limiter.options.js';

/**
 * Takes a permit before the call and gives it back after, on every path (success, failure, timeout,
 * cancellation). A time-based permit needs no giving back, so an admitted call adds no promise hop.
 *
 * @internal
 */
declare module '../strategy/resilience-strategy.interface.js' {
  interface StrategyPorts {
    /** The limiter a rate or concurrency limiter admits calls with. */
    readonly limiter?: RateLimiter;
  }
}

export class RateLimiterStrategy<T> implements ResilienceStrategy<T> {
  readonly limiter: RateLimiter;
  readonly ports: StrategyPorts;
  private readonly telemetry: StrategyTelemetry;

  constructor(
    private readonly options: RateLimiterStrategyOptions,
    context: StrategyBuilderContext,
  ) {
    this.limiter = limiterFromOptions(options, context.timeProvider);
    this.ports = { limiter: this.limiter };
    this.telemetry = context.telemetry;
  }

  execute(next: StrategyNext<T>, context: ResilienceContext): Promise<T> {
    const limiter = this.limiter;
    if (limiter instanceof ConcurrencyLimiter) return this.executeConcurrent(limiter, next, context);
    const lease = limiter.acquire(context);
    if (isThenable(lease)) return lease.then((l) => this.run(l, next, context));
    return this.run(lease, next, context);
  }

  dispose(): void {
    // A limiter given by the user may be shared: it is theirs to dispose.
    if (!this.options.limiter) this.limiter.dispose();
  }

  /**
   * The concurrency limiter without lease objects: a queued call is one promise, started by the permit
   * handed to it.
   */
  private executeConcurrent(
    limiter: ConcurrencyLimiter,
    next: StrategyNext<T>,
    context: ResilienceContext,
  ): Promise<T> {
    if (context._scope.aborted) return Promise.reject(context._scope.reason); // a caller cancelled already
    const criticality = getCriticality(context);
    if (limiter.tryTake(criticality)) return this.holding(next, context);
    if (!limiter.makeQueueRoom(criticality)) {
      return this.reject(undefined, context, limiter.rejectionReason(criticality));
    }
    const promise = new Promise<T>(captureSettlers);
    limiter.enqueue(
      context,
      new QueuedCall<T>(this, next, context, settlers.resolve as (value: T) => void, settlers.reject!),
      criticality,
    );
    return promise;
  }

  /** Runs the call holding a permit, and gives it back however the call ends. @internal */
  holding(next: StrategyNext<T>, context: ResilienceContext): Promise<T> {
    // `next` never throws synchronously (a pipeline's steps turn a throw into a rejection).
    return next(context).then(this.releaseOnValue, this.releaseOnError);
  }

  // Bound once: the concurrency path allocates no closure per call to give its permit back.
  private readonly releaseOnValue = (value: T): T => {
    (this.limiter as ConcurrencyLimiter).releasePermit();
    return value;
  };

  private readonly releaseOnError = (error: unknown): never => {
    (this.limiter as ConcurrencyLimiter).releasePermit();
    throw error;
  };

  private run(lease: RateLimitLease, next: StrategyNext<T>, context: ResilienceContext): Promise<T> {
    if (!lease.acquired) return this.reject(lease.retryAfter, context, lease.reason);
    if (lease.release === releaseNothing) return next(context);
    return next(context).then(
      (value) => {
        lease.release();
        return value;
      },
      (error: unknown) => {
        lease.release();
        throw error;
      },
    );
  }

  /** Rejects a call: telemetry, `onRejected`, then `RateLimiterRejectedError`. @internal */
  async reject(
    retryAfter: number | undefined,
    context: ResilienceContext,
    reason: RateLimiterRejectionReason = 'limit',
  ): Promise<never> {
    this.telemetry.report('OnRateLimiterRejected', 'error', context, { retryAfter, reason });
    if (this.options.onRejected) await this.options.onRejected({ context, retryAfter, reason });
    throw createLightweightError(
      RateLimiterRejectedError,
      reason === 'shed'
        ? 'The operation was shed by the limiter (its criticality gave way to more critical calls).'
        : retryAfter === undefined
          ? 'The operation was rejected by the rate limiter.'
          : `The operation was rejected by the rate limiter; retry after ${retryAfter} ms.`,
      {
        retryAfter,
        reason,
        source: { pipelineName: this.telemetry.source.pipelineName, strategyName: this.options.name },
      },
    );
  }
}

/** A call waiting for a concurrency permit: one object per queued call, no closures. */
class QueuedCall<T> implements QueueEntry {
  constructor(
    private readonly strategy: RateLimiterStrategy<T>,
    private readonly next: StrategyNext<T>,
    private readonly context: ResilienceContext,
    private readonly resolve: (value: T) => void,
    readonly cancel: (reason: unknown) => void,
  ) {}

  grant(): void {
    this.strategy.holding(this.next, this.context).then(this.resolve, this.cancel);
  }

  shed(): void {
    this.strategy.reject(undefined, this.context, 'shed').then(this.resolve, this.cancel);
  }
}
