import { getCriticality, type Criticality } from '../context/criticality.property.js';
import type { ResilienceContext } from '../context/resilience.context.js';
import { shedError } from '../rate-limiter/limiters/concurrency.limiter.js';
import { WaiterQueue, type QueueEntry } from '../rate-limiter/limiters/waiter.queue.js';
import {
  rejectedLease,
  type InspectableRateLimiter,
  type LimiterSnapshot,
  type RateLimitLease,
} from '../rate-limiter/limiters/rate-limiter.model.js';
import type { RateLimiterRejectionReason } from '../resilience.errors.js';
import { getElapsedTime, getTimestamp, type TimeProvider } from '../time/time.provider.js';
import { AimdAlgorithm, Gradient2Algorithm, type LimitAlgorithm } from './adaptive-concurrency.algorithms.js';
import {
  ADAPTIVE_CONCURRENCY_DEFAULTS as D,
  resolveLimits,
  type AdaptiveConcurrencyAlgorithm,
  type AdaptiveConcurrencyOptions,
  type AdaptiveLimitChangedArguments,
} from './adaptive-concurrency.options.js';

/** The lease of `acquire`: measures the call from the permit to `release` (never a drop). */
class AdaptiveLease implements RateLimitLease {
  readonly acquired = true;
  private released = false;
  private readonly start: number;

  constructor(
    private readonly limiter: AdaptiveConcurrencyLimiter,
    private readonly context: ResilienceContext,
  ) {
    this.start = getTimestamp(limiter.time);
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    this.limiter.release(this.context, getElapsedTime(this.limiter.time, this.start), false);
  }
}

/**
 * A concurrency limit that follows measured latency (Netflix's concurrency-limits, Envoy's adaptive
 * concurrency): calls run while fewer than `limit` are in flight; every `windowSize` finished calls the
 * limit moves by the chosen algorithm (`gradient2` or `aimd`) within `[minLimit, maxLimit]`. Criticality
 * decides who goes first when it is full, as for `ConcurrencyLimiter`: `sheddable` calls run only while
 * fewer than `sheddableRatio × limit` are in flight and never wait; a `critical` call finding the queue
 * full takes the place of the newest queued other call; permits go to queued `critical` calls first.
 * It never admits a call that would make more than `limit` calls in flight.
 *
 * @publicApi
 */
export class AdaptiveConcurrencyLimiter implements InspectableRateLimiter {
  /** Runs when the limit (rounded down) changes; the strategy reports it as telemetry. */
  onLimitChanged: ((args: AdaptiveLimitChangedArguments, context: ResilienceContext) => void) | undefined;
  private estimate: number;
  private current: number;
  private running = 0;
  private rejected = 0;
  private readonly queue = new WaiterQueue();
  private readonly criticalQueue = new WaiterQueue();
  private readonly algorithm: LimitAlgorithm;
  private readonly algorithmName: AdaptiveConcurrencyAlgorithm;
  private readonly minLimit: number;
  private readonly maxLimit: number;
  private readonly queueLimit: number;
  private readonly sheddableRatio: number;
  private readonly windowSize: number;
  // The window being filled.
  private samples = 0;
  private rttSum = 0;
  private maxInFlight = 0;
  private dropped = false;
  private disposed = false;

  constructor(
    options: AdaptiveConcurrencyOptions,
    /** The clock RTTs are measured with (`getTimestamp`). */
    readonly time: TimeProvider,
  ) {
    const { minLimit, maxLimit, initialLimit } = resolveLimits(options);
    this.minLimit = minLimit;
    this.maxLimit = maxLimit;
    this.estimate = this.current = initialLimit;
    this.queueLimit = options.queueLimit ?? D.queueLimit;
    this.sheddableRatio = options.sheddableRatio ?? D.sheddableRatio;
    this.windowSize = options.windowSize ?? D.windowSize;
    this.algorithmName = options.algorithm ?? D.algorithm;
    this.algorithm =
      this.algorithmName === 'aimd'
        ? new AimdAlgorithm({
            backoffRatio: options.backoffRatio ?? D.backoffRatio,
            slowCallDuration: options.slowCallDuration ?? D.slowCallDuration,
          })
        : new Gradient2Algorithm({
            longWindow: options.longWindow ?? D.longWindow,
            smoothing: options.smoothing ?? D.smoothing,
            tolerance: options.tolerance ?? D.tolerance,
            growth: options.growth ?? D.growth,
          });
  }

  /** Calls that may run at once now. */
  get limit(): number {
    return this.current;
  }

  /** Calls running now. */
  get inFlight(): number {
    return this.running;
  }

  /** Callers waiting. */
  get queuedCount(): number {
    return this.queue.length + this.criticalQueue.length;
  }

  /** Calls turned away since the limiter was made. */
  get rejections(): number {
    return this.rejected;
  }

  /** Gradient2's long-window baseline RTT in milliseconds (undefined for AIMD or before any window). */
  get longRtt(): number | undefined {
    return this.algorithm.longRtt || undefined;
  }

  /** A permit at once when the limit allows; otherwise a place in the queue, or a rejection. */
  acquire(context: ResilienceContext): RateLimitLease | Promise<RateLimitLease> {
    if (context._scope.aborted) return Promise.reject(context._scope.reason);
    const criticality = getCriticality(context);
    if (this.tryTake(criticality)) return new AdaptiveLease(this, context);
    if (!this.makeQueueRoom(criticality)) return rejectedLease(undefined, this.reject(criticality));
    return new Promise<RateLimitLease>((resolve, reject) =>
      this.enqueue(
        context,
        {
          grant: () => resolve(new AdaptiveLease(this, context)),
          cancel: reject,
          shed: () => {
            this.rejected++;
            resolve(rejectedLease(undefined, 'shed'));
          },
        },
        criticality,
      ),
    );
  }

  /** Takes a permit if a call of `criticality` may run now. */
  tryTake(criticality: Criticality): boolean {
    const running = this.running;
    if (running >= this.current) return false;
    if (criticality === 'sheddable' && running >= this.current * this.sheddableRatio) return false;
    this.admit();
    return true;
  }

  /** Whether a caller of `criticality` may queue; a `critical` one may shed the newest other waiter for it. */
  makeQueueRoom(criticality: Criticality): boolean {
    if (this.disposed || criticality === 'sheddable') return false;
    if (this.queue.length + this.criticalQueue.length < this.queueLimit) return true;
    return criticality === 'critical' && this.queue.shedNewest(shedError);
  }

  /** Queues a caller; its `grant` runs holding a permit, given back with `release`. */
  enqueue(context: ResilienceContext, entry: QueueEntry, criticality: Criticality): void {
    (criticality === 'critical' ? this.criticalQueue : this.queue).add(context, entry);
  }

  /** Counts a rejection of a call of `criticality`; returns its reason. */
  reject(criticality: Criticality): RateLimiterRejectionReason {
    this.rejected++;
    return criticality === 'sheddable' ? 'shed' : 'limit';
  }

  /** Counts a queued call that was shed. @internal */
  countShed(): void {
    this.rejected++;
  }

  /**
   * Gives a permit back after a call of `rtt` milliseconds (undefined: not measured, e.g. cancelled);
   * `dropped` when the call failed as overload does. Moves the limit at the end of a window.
   */
  release(context: ResilienceContext, rtt: number | undefined, dropped: boolean): void {
    this.running--;
    if (rtt !== undefined) this.record(context, rtt, dropped);
    this.drain();
  }

  isIdle(): boolean {
    return this.running === 0 && this.queuedCount === 0;
  }

  dispose(): void {
    this.disposed = true;
    const reason = new Error('The adaptive concurrency limiter was disposed.');
    this.criticalQueue.cancelAll(reason);
    this.queue.cancelAll(reason);
  }

  snapshot(): LimiterSnapshot {
    return {
      section: 'adaptiveConcurrency',
      kind: `adaptive-${this.algorithmName}`,
      permitLimit: this.current,
      permitsInUse: this.running,
      queueLength: this.queuedCount,
      queueLimit: this.queueLimit,
      rejections: this.rejected,
    };
  }

  private admit(): void {
    if (++this.running > this.maxInFlight) this.maxInFlight = this.running;
  }

  /** Hands free permits to waiters, critical ones first. */
  private drain(): void {
    while (this.running < this.current && this.queuedCount > 0) {
      this.admit();
      if (!this.criticalQueue.grantNext() && !this.queue.grantNext()) this.running--;
    }
  }

  private record(context: ResilienceContext, rtt: number, dropped: boolean): void {
    this.rttSum += rtt;
    if (dropped) this.dropped = true;
    if (++this.samples < this.windowSize) return;
    const window = { rtt: this.rttSum / this.samples, maxInFlight: this.maxInFlight, dropped: this.dropped };
    this.samples = 0;
    this.rttSum = 0;
    this.dropped = false;
    this.maxInFlight = this.running;
    const next = Math.max(this.minLimit, Math.min(this.maxLimit, this.algorithm.update(this.estimate, window)));
    this.estimate = next;
    const previous = this.current;
    this.current = Math.floor(next);
    if (this.current !== previous) {
      this.onLimitChanged?.(
        { previousLimit: previous, limit: this.current, rtt: window.rtt, longRtt: this.longRtt },
        context,
      );
    }
  }
}
