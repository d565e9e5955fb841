import type { Cluster, Redis } from 'ioredis';
import { DEFAULT_OPERATION_TIMEOUT, resolveKeyPrefix, withTimeout } from './redis.util.js';
import { randomUUID } from 'node:crypto';
import {
  createRateLimiter,
  rejectedLease,
  systemTimeProvider,
  admittedLease,
  type RateLimiter,
  type RateLimitLease,
  type ResilienceContext,
  type TimeProvider,
} from '../core/index.js';
import type { StoreOutageMode } from './redis-circuit-breaker-state.store.js';
import { failFastOnRefusal, nodeOf, RedisAvailability, type StoreLogger } from './redis-availability.js';
import { SLIDING_WINDOW_SCRIPT, TOKEN_BUCKET_SCRIPT } from './redis-rate-limiter.scripts.js';

/** A limit every process shares through Redis. @publicApi */
export type DistributedRateLimit =
  | { kind: 'token-bucket'; tokenLimit: number; tokensPerPeriod?: number; replenishmentPeriod: number }
  | { kind: 'sliding-window'; permitLimit: number; window: number };

/** @publicApi */
export interface RedisRateLimiterOptions {
  /** An ioredis `Redis` or `Cluster` client (never closed by the limiter). */
  client: Redis | Cluster;
  /** Names the limit in its Redis key. */
  name: string;
  limit: DistributedRateLimit;
  /** One limit per key taken from the context (user, tenant…). */
  partitionKey?: (context: ResilienceContext) => string;
  /** Namespaces the keys. Default: the `name` of the package.json in the working directory; without one, required. */
  keyPrefix?: string;
  /** The longest a call waits for Redis, in ms. Default 100. */
  operationTimeout?: number;
  /** How long after a failure Redis is left alone, in ms. Default 1000. */
  retryInterval?: number;
  /** While Redis is unreachable: a limit in this process (`local`, default), `allow` or `reject`. */
  outageMode?: StoreOutageMode;
  logger?: StoreLogger;
  timeProvider?: TimeProvider;
}

/**
 * A token bucket or a sliding window shared by every process through Redis (one atomic script per
 * call). Like the Redis circuit store it never blocks a call past `operationTimeout`: when Redis is
 * unreachable a local limit (or `allow` / `reject`) takes over until it is back.
 *
 * @publicApi
 */
export class RedisRateLimiter implements RateLimiter {
  private readonly prefix: string;
  private readonly time: TimeProvider;
  private readonly local = new Map<string, RateLimiter>();
  private readonly instance = randomUUID();
  private sequence = 0;
  private readonly availability: RedisAvailability;

  constructor(private readonly options: RedisRateLimiterOptions) {
    this.prefix = resolveKeyPrefix(options.keyPrefix);
    this.time = options.timeProvider ?? systemTimeProvider;
    this.availability = new RedisAvailability({
      what: `Redis rate limiter "${options.name}"`,
      outageMode: options.outageMode ?? 'local',
      retryInterval: options.retryInterval ?? 1_000,
      time: this.time,
      logger: options.logger ?? console,
      client: options.client,
    });
    const client = options.client as unknown as Record<string, unknown>;
    // Stryker disable next-line ConditionalExpression,StringLiteral: equivalent as "true" — defining the script again on a shared client replaces it with the same script
    if (typeof client.nestResilienceTokenBucket !== 'function') {
      options.client.defineCommand('nestResilienceTokenBucket', { numberOfKeys: 1, lua: TOKEN_BUCKET_SCRIPT });
      options.client.defineCommand('nestResilienceSlidingWindow', { numberOfKeys: 1, lua: SLIDING_WINDOW_SCRIPT });
    }
  }

  acquire(context: ResilienceContext): RateLimitLease | Promise<RateLimitLease> {
    // A caller cancelled already takes nothing (a spent permit of a shared limit never comes back early).
    const signal = context.signal;
    if (signal.aborted) return Promise.reject(signal.reason as Error);
    const partition = this.options.partitionKey?.(context) ?? '';
    const now = this.time.now();
    const node = nodeOf(this.options.client, this.keyFor(partition));
    if (this.availability.skip(node)) return this.fallback(partition, context, node);
    const answer = failFastOnRefusal(this.options.client, node, this.call(partition, now));
    return withTimeout(answer, this.options.operationTimeout ?? DEFAULT_OPERATION_TIMEOUT).then(
      ([allowed, retryAfter, remaining, resetAfter]) => {
        this.availability.answered(node);
        return Number(allowed) === 1
          ? admittedLease(Number(remaining), Number(resetAfter))
          : rejectedLease(Number(retryAfter), undefined, Number(remaining), Number(resetAfter));
      },
      (error: unknown) => {
        this.availability.failed(error, node);
        return this.fallback(partition, context, node);
      },
    );
  }

  isIdle(): boolean {
    return [...this.local.values()].every((l) => l.isIdle());
  }

  dispose(): void {
    for (const limiter of this.local.values()) limiter.dispose();
    this.local.clear();
  }

  /**
   * The Redis key of a partition, `<keyPrefix>:rl2:{<name>}` or `<keyPrefix>:rl2:{<name>:<partition>}`
   * with `%`, `:`, `{` and `}` percent-encoded in the name and the partition: no two limits or partitions
   * share a key, and each partition is its own hash tag, so the partitions of a limit spread over the
   * slots (and primaries) of a Redis Cluster.
   */
  keyFor(partition: string): string {
    const tag = partition
      ? `${escapeKeyPart(this.options.name)}:${escapeKeyPart(partition)}`
      : escapeKeyPart(this.options.name);
    return `${this.prefix}:rl2:{${tag}}`;
  }

  private call(partition: string, now: number): Promise<[number, number, number, number]> {
    const client = this.options.client as unknown as Record<
      string,
      (...a: unknown[]) => Promise<[number, number, number, number]>
    >;
    const key = this.keyFor(partition);
    const limit = this.options.limit;
    if (limit.kind === 'token-bucket') {
      return client.nestResilienceTokenBucket(
        key,
        now,
        limit.tokenLimit,
        limit.tokensPerPeriod ?? 1,
        limit.replenishmentPeriod,
      );
    }
    return client.nestResilienceSlidingWindow(
      key,
      now,
      limit.permitLimit,
      limit.window,
      // Stryker disable next-line UpdateOperator: equivalent — counting down keeps the members of this instance as distinct
      `${now}:${this.instance}:${++this.sequence}`,
    );
  }

  private fallback(
    partition: string,
    context: ResilienceContext,
    node: string,
  ): RateLimitLease | Promise<RateLimitLease> {
    const mode = this.options.outageMode; // the default is local
    if (mode === 'allow') return admittedLease();
    if (mode === 'reject') return rejectedLease(this.availability.retryAfter(this.time.now(), node));
    let limiter = this.local.get(partition);
    if (!limiter) this.local.set(partition, (limiter = createRateLimiter(this.options.limit, this.time)));
    return limiter.acquire(context);
  }
}

/** Percent-encodes what separates the parts of a limit key (`:`) or its hash tag (`{`, `}`), and `%`. */
function escapeKeyPart(part: string): string {
  return part.replace(/[%:{}]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}
