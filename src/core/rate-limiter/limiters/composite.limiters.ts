import type { ResilienceContext } from '../../context/resilience.context.js';
import { isThenable } from '../../utils/is-thenable.util.js';
import { rejectedLease, type RateLimiter, type RateLimitLease } from './rate-limiter.model.js';

/**
 * One limiter per partition key (per user, per tenant, per host), made on first use. Partitions that are
 * idle (full, nothing out, nobody queued) are dropped every `sweepEvery` acquisitions, so unbounded key
 * spaces do not grow memory without bound.
 *
 * @publicApi
 */
export class PartitionedRateLimiter implements RateLimiter {
  private readonly partitions = new Map<string, RateLimiter>();
  private untilSweep: number;

  constructor(
    private readonly partitionKey: (context: ResilienceContext) => string,
    private readonly create: (key: string) => RateLimiter,
    private readonly sweepEvery = 1_024,
  ) {
    this.untilSweep = sweepEvery;
  }

  /** Partitions alive now. */
  get partitionCount(): number {
    return this.partitions.size;
  }

  /** Asks the limiter of the context's partition for a permit. */
  acquire(context: ResilienceContext): RateLimitLease | Promise<RateLimitLease> {
    const key = this.partitionKey(context);
    let limiter = this.partitions.get(key);
    if (!limiter) this.partitions.set(key, (limiter = this.create(key)));
    if (--this.untilSweep === 0) {
      this.untilSweep = this.sweepEvery;
      this.sweep(limiter);
    }
    return limiter.acquire(context);
  }

  isIdle(): boolean {
    return [...this.partitions.values()].every((l) => l.isIdle());
  }

  dispose(): void {
    for (const limiter of this.partitions.values()) limiter.dispose();
    this.partitions.clear();
  }

  private sweep(keep: RateLimiter): void {
    for (const [key, limiter] of this.partitions) {
      if (limiter !== keep && limiter.isIdle()) {
        limiter.dispose();
        this.partitions.delete(key);
      }
    }
  }
}

/**
 * Every limiter must admit the call (e.g. 10 per second *and* 1,000 per hour). Permits are taken in
 * order; when one limiter rejects, the permits already taken are released (time-based limiters cannot
 * take back a spent permit, as in .NET's chained limiter). The rejection carries the rejecting limiter's
 * retry-after and quota; an admission reports the tightest quota (the fewest permits left).
 *
 * @publicApi
 */
export class ChainedRateLimiter implements RateLimiter {
  constructor(private readonly limiters: readonly RateLimiter[]) {}

  /** Asks every limiter in order; the call is admitted only if all of them admit it. */
  acquire(context: ResilienceContext): RateLimitLease | Promise<RateLimitLease> {
    return this.acquireFrom(0, [], context);
  }

  isIdle(): boolean {
    return this.limiters.every((l) => l.isIdle());
  }

  dispose(): void {
    for (const limiter of this.limiters) limiter.dispose();
  }

  private acquireFrom(
    index: number,
    taken: RateLimitLease[],
    context: ResilienceContext,
  ): RateLimitLease | Promise<RateLimitLease> {
    for (let i = index; i < this.limiters.length; i++) {
      const lease = this.limiters[i].acquire(context);
      if (isThenable(lease)) {
        return lease.then(
          (l) => this.accept(l, i, taken, context),
          (error: unknown) => {
            for (const t of taken) t.release();
            throw error;
          },
        );
      }
      if (!lease.acquired) return this.reject(lease, taken);
      taken.push(lease);
    }
    return combine(taken);
  }

  private accept(lease: RateLimitLease, index: number, taken: RateLimitLease[], context: ResilienceContext) {
    if (!lease.acquired) return this.reject(lease, taken);
    taken.push(lease);
    return this.acquireFrom(index + 1, taken, context);
  }

  private reject(lease: RateLimitLease, taken: RateLimitLease[]): RateLimitLease {
    for (const t of taken) t.release();
    return rejectedLease(lease.retryAfter, lease.reason, lease.remaining, lease.resetAfter);
  }
}

function combine(leases: RateLimitLease[]): RateLimitLease {
  // Stryker disable next-line ConditionalExpression: equivalent — a combined lease of one releases that one; this only allocates less
  if (leases.length === 1) return leases[0];
  // The quota reported is the tightest one: the fewest permits left, and that limit's reset.
  let tightest: RateLimitLease | undefined;
  for (const l of leases) {
    if (l.remaining !== undefined && (tightest === undefined || l.remaining < tightest.remaining!)) tightest = l;
  }
  return {
    acquired: true,
    remaining: tightest?.remaining,
    resetAfter: tightest?.resetAfter,
    release: () => leases.forEach((l) => l.release()),
  };
}
