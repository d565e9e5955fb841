import type { ResilienceContext } from './resilience.context.js';
import { ResiliencePropertyKey } from './resilience-property.key.js';

/**
 * How much a call matters when a limit is full: `critical` calls are the last to be turned away,
 * `sheddable` ones the first, `default` is everything else. Read by the concurrency limiter and the
 * adaptive concurrency limiter (see `docs/criticality.md` for the exact rule).
 *
 * @publicApi
 */
export type Criticality = 'critical' | 'default' | 'sheddable';

/** Every criticality, most important first. @publicApi */
export const CRITICALITIES: readonly Criticality[] = Object.freeze(['critical', 'default', 'sheddable']);

/**
 * The context property that carries a call's criticality. Absent means `default`.
 *
 * ```ts
 * const context = new ResilienceContext();
 * setCriticality(context, 'sheddable');
 * await pipeline.execute(work, context);
 * ```
 *
 * @publicApi
 */
export const CRITICALITY_KEY = new ResiliencePropertyKey<Criticality>('nest-resilience.criticality');

/** Whether `value` is one of `critical`, `default`, `sheddable`. @publicApi */
export function isCriticality(value: unknown): value is Criticality {
  return value === 'critical' || value === 'default' || value === 'sheddable';
}

/**
 * Reads a criticality written by a person or a peer (a header value): the three names in any case,
 * surrounded by spaces or not; `undefined` for anything else (so an unknown value changes nothing).
 *
 * @publicApi
 */
export function parseCriticality(value: unknown): Criticality | undefined {
  if (typeof value !== 'string') return undefined;
  const text = value.trim().toLowerCase();
  return isCriticality(text) ? text : undefined;
}

/** The criticality of the call `context` belongs to: its `CRITICALITY_KEY`, or `default`. @publicApi */
export function getCriticality(context: ResilienceContext): Criticality {
  // `hasProperties` never allocates the bag: a call without properties costs one check.
  return context.hasProperties ? context.properties.getOrDefault(CRITICALITY_KEY, 'default') : 'default';
}

/** Sets the criticality of the call `context` belongs to; returns the context. @publicApi */
export function setCriticality(context: ResilienceContext, criticality: Criticality): ResilienceContext {
  context.properties.set(CRITICALITY_KEY, criticality);
  return context;
}

/** Default share of a limit that `sheddable` calls may fill. @publicApi */
export const DEFAULT_SHEDDABLE_RATIO = 0.8;
