/** One instance's (or the fleet's) counts in one bucket of a window. @publicApi */
export interface AdaptiveThrottlingBucketCounts {
  /** The bucket: the time divided by the bucket's length (a twentieth of the window), rounded down. */
  readonly bucket: number;
  /** Requests counted in the bucket (those rejected locally included). */
  readonly requests: number;
  /** Requests the dependency accepted in the bucket. */
  readonly accepts: number;
}

/** What one instance sends to the store it shares its window through, and what it asks for. @publicApi */
export interface AdaptiveThrottlingSyncRequest {
  /** Names the shared window: every instance that gives the same key shares it. */
  readonly key: string;
  /** Names the sending instance (one strategy of one process), unique in the fleet. */
  readonly instance: string;
  /** The oldest bucket of the window now: older buckets have left it. */
  readonly firstBucket: number;
  /** The newest bucket of the window now (the current one). */
  readonly lastBucket: number;
  /** How long the store keeps a bucket it writes, in ms: a little longer than the window. */
  readonly ttl: number;
  /**
   * The instance's **running totals** in each bucket of the window that changed since its last sync the
   * store answered. Totals, not increments: a store keeps, per bucket, the highest totals each
   * instance sent, so a sync sent twice (after a timeout that was in fact applied) or late never counts twice.
   */
  readonly counts: readonly AdaptiveThrottlingBucketCounts[];
}

/**
 * Where the instances of a fleet add up the windows of their adaptive throttling strategies (the
 * `fleet` option): `RedisAdaptiveThrottlingStore` from `nest-resilience/redis`, the module's own with
 * `store: { redis }`, or `InMemoryAdaptiveThrottlingStore` for strategies of one process (and tests).
 *
 * A strategy never waits for its store on a call: it syncs in the background, every `syncInterval`.
 *
 * @publicApi
 */
export interface AdaptiveThrottlingStore {
  /**
   * Records the instance's counts (`request.counts`), drops what left the window, and answers the fleet's
   * counts in the buckets from `firstBucket` to `lastBucket` — every instance's, this one's included
   * (buckets without counts may be left out). Rejects when the store cannot be reached; the strategy then
   * throttles on its own counts until a sync succeeds again. It should settle in a bounded time (the Redis
   * store: `operationTimeout`).
   */
  sync(request: AdaptiveThrottlingSyncRequest): Promise<readonly AdaptiveThrottlingBucketCounts[]>;
}

/** One bucket of a window in memory: the fleet's sums and each instance's totals. */
interface MemoryBucket {
  requests: number;
  accepts: number;
  readonly byInstance: Map<string, { requests: number; accepts: number }>;
}

/**
 * An `AdaptiveThrottlingStore` in this process's memory: strategies of one process that name the same
 * `key` share one window. It answers at once and never fails.
 *
 * @publicApi
 */
export class InMemoryAdaptiveThrottlingStore implements AdaptiveThrottlingStore {
  private readonly windows = new Map<string, Map<number, MemoryBucket>>();

  sync(request: AdaptiveThrottlingSyncRequest): Promise<readonly AdaptiveThrottlingBucketCounts[]> {
    let window = this.windows.get(request.key);
    if (!window) this.windows.set(request.key, (window = new Map<number, MemoryBucket>()));
    for (const bucket of window.keys()) if (bucket < request.firstBucket) window.delete(bucket);
    for (const { bucket, requests, accepts } of request.counts) {
      if (bucket < request.firstBucket || bucket > request.lastBucket) continue;
      let entry = window.get(bucket);
      if (!entry) window.set(bucket, (entry = { requests: 0, accepts: 0, byInstance: new Map() }));
      let sent = entry.byInstance.get(request.instance);
      if (!sent) entry.byInstance.set(request.instance, (sent = { requests: 0, accepts: 0 }));
      // The highest totals each instance sent: a repeated or late sync adds nothing.
      if (requests > sent.requests) {
        entry.requests += requests - sent.requests;
        sent.requests = requests;
      }
      if (accepts > sent.accepts) {
        entry.accepts += accepts - sent.accepts;
        sent.accepts = accepts;
      }
    }
    const answer: AdaptiveThrottlingBucketCounts[] = [];
    for (const [bucket, { requests, accepts }] of window) {
      if (bucket <= request.lastBucket) answer.push({ bucket, requests, accepts });
    }
    return Promise.resolve(answer);
  }
}
