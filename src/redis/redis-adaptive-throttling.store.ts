import type { Cluster, Redis } from 'ioredis';
import {
  systemTimeProvider,
  type AdaptiveThrottlingBucketCounts,
  type AdaptiveThrottlingStore,
  type AdaptiveThrottlingSyncRequest,
  type TimeProvider,
} from '../core/index.js';
import { failFastOnRefusal, nodeOf, RedisAvailability, type StoreLogger } from './redis-availability.js';
import { ADAPTIVE_THROTTLING_SYNC_SCRIPT } from './redis-adaptive-throttling.scripts.js';
import { DEFAULT_OPERATION_TIMEOUT, resolveKeyPrefix, withTimeout } from './redis.util.js';

/** Options of `RedisAdaptiveThrottlingStore`. @publicApi */
export interface RedisAdaptiveThrottlingStoreOptions {
  /** An ioredis `Redis` or `Cluster` client (never closed by the store). */
  client: Redis | Cluster;
  /** Namespaces the keys. Default: the `name` of the package.json in the working directory; without one, required. */
  keyPrefix?: string;
  /** The longest one sync waits for Redis, in ms. Default 100. */
  operationTimeout?: number;
  /** How long after a failure Redis is left alone (syncs fail at once), in ms. Default 1000. */
  retryInterval?: number;
  /** Where each outage, and its end, is logged once. Default `console`. */
  logger?: StoreLogger;
  /** The clock `retryInterval` is measured on. */
  timeProvider?: TimeProvider;
}

/**
 * The windows of adaptive throttling strategies with `fleet`, shared by every instance through Redis:
 * one hash per bucket of a window, `<keyPrefix>:at:{<key>}:<bucket>` (`%`, `:`, `{`, `}` percent-encoded in
 * the key), each expiring a twentieth of the window after the window has passed; a sync is one script.
 * A sync never waits longer than `operationTimeout`; after a failure Redis is left alone for
 * `retryInterval` (syncs fail at once, so the strategies throttle on their own counts), and each outage
 * is logged once, and its end once.
 *
 * @publicApi
 */
export class RedisAdaptiveThrottlingStore implements AdaptiveThrottlingStore {
  private readonly prefix: string;
  private readonly timeout: number;
  private readonly availability: RedisAvailability;

  constructor(private readonly options: RedisAdaptiveThrottlingStoreOptions) {
    this.prefix = resolveKeyPrefix(options.keyPrefix);
    this.timeout = options.operationTimeout ?? DEFAULT_OPERATION_TIMEOUT;
    this.availability = new RedisAvailability({
      what: 'Redis adaptive throttling store',
      outageMode: 'local',
      whileDown: 'each instance throttles on its own counts',
      retryInterval: options.retryInterval ?? 1_000,
      time: options.timeProvider ?? systemTimeProvider,
      logger: options.logger ?? console,
      client: options.client,
    });
    const client = options.client as unknown as Record<string, unknown>;
    // Stryker disable next-line ConditionalExpression: equivalent — defining the script again on a shared client replaces it with the same script
    if (typeof client.nestResilienceThrottleSync !== 'function') {
      options.client.defineCommand('nestResilienceThrottleSync', { lua: ADAPTIVE_THROTTLING_SYNC_SCRIPT });
    }
  }

  /** True from a failure until Redis answers again. */
  get isDegraded(): boolean {
    return this.availability.isDegraded;
  }

  sync(request: AdaptiveThrottlingSyncRequest): Promise<readonly AdaptiveThrottlingBucketCounts[]> {
    const { firstBucket, lastBucket } = request;
    const keys: string[] = [];
    for (let bucket = firstBucket; bucket <= lastBucket; bucket++) keys.push(this.keyFor(request.key, bucket));
    const node = nodeOf(this.options.client, keys[0]);
    if (this.availability.skip(node)) {
      return Promise.reject(new Error('Redis adaptive throttling store unavailable; it is left alone until retried'));
    }
    const args: (string | number)[] = [request.instance, request.ttl];
    for (const { bucket, requests, accepts } of request.counts) {
      if (bucket < firstBucket || bucket > lastBucket) continue;
      args.push(bucket - firstBucket + 1, requests, accepts);
    }
    const client = this.options.client as unknown as {
      nestResilienceThrottleSync(numberOfKeys: number, ...a: (string | number)[]): Promise<number[]>;
    };
    const answer = failFastOnRefusal(
      this.options.client,
      node,
      client.nestResilienceThrottleSync(keys.length, ...keys, ...args),
    );
    return withTimeout(answer, this.timeout).then(
      (counts) => {
        this.availability.answered(node);
        const fleet: AdaptiveThrottlingBucketCounts[] = [];
        for (let i = 0; i < keys.length; i++) {
          const requests = Number(counts[2 * i]);
          const accepts = Number(counts[2 * i + 1]);
          if (requests > 0 || accepts > 0) fleet.push({ bucket: firstBucket + i, requests, accepts });
        }
        return fleet;
      },
      (error: unknown) => {
        this.availability.failed(error, node);
        throw error;
      },
    );
  }

  /**
   * The Redis key of one bucket of a window: `<keyPrefix>:at:{<key>}:<bucket>`, with `%`, `:`, `{` and `}`
   * percent-encoded in the key — the key is the hash tag, so a window's buckets share one cluster slot.
   */
  keyFor(key: string, bucket: number): string {
    return `${this.prefix}:at:{${escapeKeyPart(key)}}:${bucket}`;
  }
}

/** Percent-encodes what separates the parts of a key (`:`) or its hash tag (`{`, `}`), and `%`. */
function escapeKeyPart(part: string): string {
  return part.replace(/[%:{}]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}
