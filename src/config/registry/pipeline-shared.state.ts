import {
  ADAPTIVE_THROTTLING_STORE_SERVICE,
  CIRCUIT_CONTROL_SERVICE,
  CIRCUIT_STATE_STORE_SERVICE,
  CircuitBreakerManualControl,
  SHARED_LIMITER_SERVICE,
  type AdaptiveThrottlingStore,
  type CircuitBreakerStateStore,
  type RateLimiter,
  type RateLimiterStrategyOptions,
  type SharedLimitSectionName,
  type StrategyConfigEnvironment,
  type StrategyServiceKey,
  type TimeProvider,
} from '../../core/index.js';
import { DISTRIBUTED_LIMITS_SERVICE, limiterFromOptions } from '../../core/internal.js';
import type { InspectedLimiter } from './registry.inspection.js';

/**
 * One part of a distributed limit's id, `:` and `%` percent-encoded: pipeline `rpc:inventory` and
 * pipeline `rpc` with key `inventory` name two limits (`rpc%3Ainventory:rateLimiter`,
 * `rpc:inventory:rateLimiter`).
 */
function escapeIdPart(part: string): string {
  return part.replace(/[%:]/g, (c) => (c === '%' ? '%25' : '%3A'));
}

/**
 * The state a registry's pipelines share across instances, reloads and decorated methods: the circuit
 * store, one manual circuit control per pipeline name, one limiter per pipeline name, key and limit
 * section. Hands it to strategies built from configuration as services.
 *
 * @internal
 */
export class PipelineSharedState {
  private readonly controls = new Map<string, CircuitBreakerManualControl>();
  private readonly limiters = new Map<string, InspectedLimiter>();

  constructor(
    readonly stateStore: CircuitBreakerStateStore,
    private readonly timeProvider: TimeProvider,
    private readonly distributedLimiter: ((id: string, options: RateLimiterStrategyOptions) => RateLimiter) | undefined,
    private readonly adaptiveThrottlingStore?: AdaptiveThrottlingStore,
  ) {}

  /** The manual control of the circuits of pipeline `name`, made on first use. */
  circuitControl(name: string): CircuitBreakerManualControl {
    let control = this.controls.get(name);
    if (!control) this.controls.set(name, (control = new CircuitBreakerManualControl()));
    return control;
  }

  /** The limiter a limit section of pipeline `name` (instance `key`) shares, made on first use. */
  sharedLimiter(
    name: string,
    key: string | undefined,
    section: SharedLimitSectionName,
    options: RateLimiterStrategyOptions,
  ): RateLimiter {
    const instanceKey = key || undefined; // '' is the pipeline without a key, as for getPipeline
    const id = [name, instanceKey, section].join('\u0000'); // undefined joins as ''
    let shared = this.limiters.get(id);
    if (!shared) {
      // Validated: a distributed limit is refused at start-up where there is no distributedLimiter.
      const limiter = options.distributed
        ? this.distributedLimiter!(
            [name, instanceKey, section]
              .filter((p) => p !== undefined)
              .map(escapeIdPart)
              .join(':'),
            options,
          )
        : limiterFromOptions(options, this.timeProvider);
      shared = { name, key: instanceKey, section, options, limiter };
      this.limiters.set(id, shared);
    }
    return shared.limiter;
  }

  /** The shared limiters made so far, with what they were made from (for inspection). */
  sharedLimiters(): Iterable<InspectedLimiter> {
    return this.limiters.values();
  }

  /**
   * What strategies built from configuration may ask for: the state store (and the adaptive throttling
   * store, when there is one); with a pipeline `name`, its circuit control and its limiters for `key`.
   */
  services(name: string | undefined, key: string | undefined): StrategyConfigEnvironment {
    const services = new Map<StrategyServiceKey<unknown>, unknown>([[CIRCUIT_STATE_STORE_SERVICE, this.stateStore]]);
    if (this.distributedLimiter) services.set(DISTRIBUTED_LIMITS_SERVICE, true);
    if (this.adaptiveThrottlingStore) services.set(ADAPTIVE_THROTTLING_STORE_SERVICE, this.adaptiveThrottlingStore);
    if (name !== undefined) {
      services.set(CIRCUIT_CONTROL_SERVICE, this.circuitControl(name));
      services.set(SHARED_LIMITER_SERVICE, (section: SharedLimitSectionName, o: RateLimiterStrategyOptions) =>
        this.sharedLimiter(name, key, section, o),
      );
    }
    return { service: <S>(serviceKey: StrategyServiceKey<S>) => services.get(serviceKey) as S | undefined };
  }

  /** Disposes the shared limiters. */
  dispose(): void {
    for (const { limiter } of this.limiters.values()) limiter.dispose();
    this.limiters.clear();
  }
}
