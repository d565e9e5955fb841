import type { Cluster, Redis } from 'ioredis';
import { systemTimeProvider, type TimeProvider } from '../core/index.js';
import { RedisAvailability, WHOLE, type StoreLogger } from './redis-availability.js';
import { DEFAULT_OPERATION_TIMEOUT, withTimeout } from './redis.util.js';

/** Options of `RedisFleetChannel`. @internal */
export interface RedisFleetChannelOptions {
  /** Default `nest-resilience`, as the stores'. */
  keyPrefix?: string;
  /** The longest one publish or read waits for Redis, in ms. Default 100. */
  operationTimeout?: number;
  /** After a failure, how long Redis is left alone, in ms. Default 1 000. */
  retryInterval?: number;
  logger: StoreLogger;
  timeProvider?: TimeProvider;
}

/**
 * The fleet's stats in the shared Redis: one hash, `<keyPrefix>:fleet`, with one field per instance
 * holding its last snapshot — so memory is bounded by the number of instances whatever their traffic,
 * and the dashboard reads the whole fleet with one `HGETALL`. Each publish also renews the hash's expiry,
 * so a fleet that stops leaves nothing behind.
 *
 * Nothing here ever throws or waits longer than `operationTimeout`: a publish that fails starts an
 * outage (one log line, `Redis fleet stats unavailable (…); publishing pauses until it is back.`),
 * during which publishes and reads are skipped without asking Redis, retried after `retryInterval`;
 * the answer that ends it is logged once.
 *
 * @internal
 */
export class RedisFleetChannel {
  private readonly key: string;
  private readonly timeout: number;
  private readonly availability: RedisAvailability;

  constructor(
    private readonly client: Redis | Cluster,
    options: RedisFleetChannelOptions,
  ) {
    this.key = `${options.keyPrefix ?? 'nest-resilience'}:fleet`;
    this.timeout = options.operationTimeout ?? DEFAULT_OPERATION_TIMEOUT;
    this.availability = new RedisAvailability({
      what: 'Redis fleet stats',
      outageMode: 'pause',
      whileDown: 'publishing pauses',
      retryInterval: options.retryInterval ?? 1_000,
      time: options.timeProvider ?? systemTimeProvider,
      logger: options.logger,
    });
  }

  /** True from a failure until Redis answers again. */
  get isDegraded(): boolean {
    return this.availability.isDegraded;
  }

  /** Stores `snapshot` as `instance`'s, and keeps the fleet's hash for `ttl` ms more. Never rejects. */
  async publish(instance: string, snapshot: string, ttl: number): Promise<void> {
    await this.ask(() => this.client.multi().hset(this.key, instance, snapshot).pexpire(this.key, ttl).exec());
  }

  /** Every instance's last snapshot; undefined while Redis cannot be read. Never rejects. */
  async read(): Promise<Map<string, string> | undefined> {
    const all = await this.ask(() => this.client.hgetall(this.key));
    return all && new Map(Object.entries(all));
  }

  /** Drops instances' snapshots (an instance that stops, or one long gone). Never rejects. */
  async forget(instances: readonly string[]): Promise<void> {
    if (instances.length > 0) await this.ask(() => this.client.hdel(this.key, ...instances));
  }

  private async ask<T>(command: () => Promise<T>): Promise<T | undefined> {
    if (this.availability.skip(WHOLE)) return undefined;
    try {
      const answer = await withTimeout(command(), this.timeout);
      this.availability.answered(WHOLE);
      return answer;
    } catch (error) {
      this.availability.failed(error, WHOLE);
      return undefined;
    }
  }
}
