import { SetMetadata } from '@nestjs/common';
import { RESILIENCE_THROTTLE_LIMITS, RESILIENCE_THROTTLE_SKIP } from '../resilience.constants.js';
import { NEST_RULES } from '../resilience.messages.js';

/**
 * The limits of the module option `throttle.limits` that `ResilienceThrottleGuard` applies to a route
 * (on a handler) or to every route of a controller (on its class), instead of the one named `default`.
 * A name no limit has fails the start.
 *
 * @publicApi
 */
export function ResilienceThrottle(...limits: string[]): ClassDecorator & MethodDecorator {
  if (limits.length === 0 || limits.some((name) => typeof name !== 'string' || name.length === 0)) {
    throw new Error(NEST_RULES.throttleNeedsNames);
  }
  return SetMetadata(RESILIENCE_THROTTLE_LIMITS, Object.freeze([...limits]));
}

/**
 * Exempts a route (on a handler) or every route of a controller (on its class) from
 * `ResilienceThrottleGuard`; `@SkipResilienceThrottle(false)` on a handler limits it again in a
 * skipped controller. (Named apart from `@nestjs/throttler`'s `@SkipThrottle`, so both can be used.)
 *
 * @publicApi
 */
export function SkipResilienceThrottle(skip = true): ClassDecorator & MethodDecorator {
  return SetMetadata(RESILIENCE_THROTTLE_SKIP, skip);
}
