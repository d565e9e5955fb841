import { Inject, Injectable, Optional, type OnApplicationShutdown } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import {
  createRateLimiter,
  OptionsValidator,
  PartitionedRateLimiter,
  ResilienceContext,
  systemTimeProvider,
  type RateLimiter,
  type RateLimitLease,
  type TimeProvider,
} from '../../core/index.js';
import { RESILIENCE_STORE_HANDLE, type ResilienceStoreHandle } from '../store/resilience-store.factory.js';
import {
  RESILIENCE_STARTUP_ISSUES,
  RESILIENCE_THROTTLE_LIMITS,
  RESILIENCE_TIME_PROVIDER,
} from '../resilience.constants.js';
import { RESILIENCE_MODULE_OPTIONS } from '../options/resilience.module-definition.js';
import type { ResilienceModuleOptions } from '../options/resilience-module-options.interface.js';
import { NEST_RULES } from '../resilience.messages.js';
import {
  normalizeThrottleOptions,
  type NormalizedThrottleLimit,
  type ResilienceThrottleOptions,
} from '../options/resilience-throttle.options.js';

/** The limit a route applies when no `@ResilienceThrottle` names others. @publicApi */
export const DEFAULT_THROTTLE_LIMIT = 'default';

/**
 * What the limits a request went through answered: admitted or not, and the quota to report — the
 * rejecting limit's, else the tightest one's (the fewest permits left).
 *
 * @publicApi
 */
export interface ResilienceThrottleDecision {
  /** Whether every limit admitted the request. */
  readonly admitted: boolean;
  /** The name of the limit reported. */
  readonly limit: string;
  /** Its quota: `permitLimit`, or `tokenLimit` for a token bucket (`RateLimit-Limit`). */
  readonly quota: number;
  /** Permits the client has left (`RateLimit-Remaining`), when the limiter tells. */
  readonly remaining: number | undefined;
  /** Milliseconds until the client's quota is whole again (`RateLimit-Reset`), when the limiter tells. */
  readonly resetAfter: number | undefined;
  /** When rejected: milliseconds until a permit may be free (`Retry-After`). */
  readonly retryAfter: number | undefined;
}

interface BuiltLimit {
  readonly name: string;
  readonly quota: number;
  readonly limiter: RateLimiter;
}

/** The partition of a limit: the client key, carried as the context's operation key. */
const clientOf = (context: ResilienceContext): string => context.operationKey ?? '';

/**
 * The per-client limits of the module option `throttle`, which `ResilienceThrottleGuard` applies:
 * validated when the application starts (with every `@ResilienceThrottle` name), built on first use, on
 * the rate limiters of the core — or on the Redis limiter for `distributed` ones. Inject it into a guard
 * of your own (a subclass of `ResilienceThrottleGuard`).
 *
 * @publicApi
 */
@Injectable()
export class ResilienceThrottler implements OnApplicationShutdown {
  private readonly definitions: Map<string, NormalizedThrottleLimit>;
  private readonly built = new Map<string, BuiltLimit>();
  private readonly time: TimeProvider;

  constructor(
    @Inject(RESILIENCE_MODULE_OPTIONS) private readonly options: ResilienceModuleOptions,
    @Inject(RESILIENCE_STORE_HANDLE) private readonly store: ResilienceStoreHandle,
    @Optional() @Inject(RESILIENCE_TIME_PROVIDER) time: TimeProvider | undefined,
    @Inject(RESILIENCE_STARTUP_ISSUES) issues: OptionsValidator,
    discovery: DiscoveryService,
    scanner: MetadataScanner,
  ) {
    this.time = time ?? systemTimeProvider;
    // Problems are reported at start-up with every other one of the module (one error).
    this.definitions = normalizeThrottleOptions(options.throttle, store.distributedLimiter !== undefined, issues);
    this.checkDecorators(discovery, scanner, issues);
  }

  /** Whether `exemptCritical` is on. */
  get exemptsCritical(): boolean {
    return this.options.throttle?.exemptCritical === true;
  }

  /** Whether `RateLimit-*` headers are sent (`headers`, default true). */
  get sendsHeaders(): boolean {
    return this.options.throttle?.headers !== false;
  }

  /** The `key` option: how a request names its client, if configured. */
  get keyOption(): ResilienceThrottleOptions['key'] {
    return this.options.throttle?.key;
  }

  /** The limits a route applies: those named, else `default` when it is configured. */
  limitsFor(names: readonly string[] | undefined): readonly string[] {
    if (names !== undefined) return names;
    return this.definitions.has(DEFAULT_THROTTLE_LIMIT) ? [DEFAULT_THROTTLE_LIMIT] : [];
  }

  /**
   * Takes one permit of each named limit for `client`, in order, stopping at the first that rejects
   * (a time-based permit already taken is not given back). Undefined when no limit applies.
   */
  async take(names: readonly string[], client: string): Promise<ResilienceThrottleDecision | undefined> {
    let reported: ResilienceThrottleDecision | undefined;
    for (const name of names) {
      const limit = this.limit(name);
      const lease: RateLimitLease = await limit.limiter.acquire(new ResilienceContext({ operationKey: client }));
      const decision: ResilienceThrottleDecision = {
        admitted: lease.acquired,
        limit: name,
        quota: limit.quota,
        remaining: lease.remaining,
        resetAfter: lease.resetAfter,
        retryAfter: lease.acquired ? undefined : lease.retryAfter,
      };
      if (!lease.acquired) return decision;
      if (reported === undefined || (decision.remaining ?? Infinity) < (reported.remaining ?? Infinity)) {
        reported = decision;
      }
    }
    return reported;
  }

  /** Disposes the limiters built. */
  onApplicationShutdown(): void {
    for (const limit of this.built.values()) limit.limiter.dispose();
    this.built.clear();
  }

  private limit(name: string): BuiltLimit {
    let limit = this.built.get(name);
    if (limit) return limit;
    const definition = this.definitions.get(name)!; // every name was checked at start-up
    const { distributed, ...local } = definition;
    const limiter =
      distributed === true
        ? this.store.distributedLimiter!(`throttle:${name}`, { ...local, partitionKey: clientOf })
        : new PartitionedRateLimiter(clientOf, () => createRateLimiter(local, this.time));
    const quota = local.kind === 'token-bucket' ? local.tokenLimit : local.permitLimit;
    this.built.set(name, (limit = { name, quota, limiter }));
    return limit;
  }

  /** Every name a `@ResilienceThrottle` of a controller gives must be a configured limit. */
  private checkDecorators(discovery: DiscoveryService, scanner: MetadataScanner, issues: OptionsValidator): void {
    const known = [...this.definitions.keys()];
    for (const wrapper of discovery.getControllers()) {
      const metatype = wrapper.metatype as (abstract new (...args: never[]) => unknown) | null | undefined;
      if (typeof metatype !== 'function') continue;
      const prototype = metatype.prototype as Record<string, unknown>;
      const targets: [string, object][] = [[metatype.name, metatype]];
      for (const method of scanner.getAllMethodNames(prototype)) {
        const handler = prototype[method];
        if (typeof handler === 'function') targets.push([`${metatype.name}.${method}`, handler]);
      }
      for (const [path, target] of targets) {
        const names = Reflect.getMetadata(RESILIENCE_THROTTLE_LIMITS, target) as readonly string[] | undefined;
        for (const name of names ?? []) {
          if (!this.definitions.has(name)) {
            issues.add(`${path} @ResilienceThrottle`, name, NEST_RULES.unknownThrottleLimit(name, known));
          }
        }
      }
    }
  }
}
