import {
  adaptiveConcurrencyStrategy,
  adaptiveThrottlingStrategy,
  chaosFaultStrategy,
  chaosLatencyStrategy,
  circuitBreakerStrategy,
  concurrencyLimiterStrategy,
  fallbackStrategy,
  hedgingStrategy,
  rateLimiterStrategy,
  retryStrategy,
  timeoutStrategy,
  type AnyStrategyDefinition,
  type StrategyDefinition,
  type StrategySectionDefinition,
} from '../../core/index.js';
import { CONFIG_RULES } from '../config.messages.js';

/**
 * One line of the strategy catalog: a configuration section and the strategy it adds, or a slot for a
 * decorator without a section (`@UseResiliencePipeline`, a whole named pipeline).
 *
 * @publicApi
 */
export interface StrategyCatalogLine<N extends string = string, C = unknown> {
  /** The section's name in a `PipelineConfig` (`retry`, `timeout`, …). */
  readonly name: N;
  /** The decorator of the same place (`Retry`), if there is one. */
  readonly decorator: string | undefined;
  /** The type of the strategy the section adds (`rate-limiter`); `undefined` for a slot. */
  readonly type: string | undefined;
  /** The strategy the section adds; `undefined` for a slot without a configuration section. */
  readonly registration: StrategyDefinition | undefined;
  /** How the section's data maps to the strategy (`registration.sections[name]`). */
  readonly definition: StrategySectionDefinition<object>;
  /** Never set: the section's data type, for the compiler. */
  readonly __config?: C;
}

/** @deprecated Use `StrategyCatalogLine`. @publicApi */
export type StrategySection<N extends string = string> = StrategyCatalogLine<N>;

/**
 * The catalog line of a descriptor's section: `catalogLine('retry', retryStrategy)`.
 *
 * @publicApi
 */
export function catalogLine<N extends string, C extends Record<string, unknown>>(
  name: N & keyof C,
  descriptor: AnyStrategyDefinition & { readonly sections?: { readonly [S in keyof C]: { readonly __config?: C[S] } } },
): StrategyCatalogLine<N, C[N]> {
  const definition = (descriptor.sections as Record<string, StrategySectionDefinition<object>> | undefined)?.[name];
  if (!definition) throw new Error(CONFIG_RULES.noSectionInDescriptor(descriptor.type, name));
  return {
    name,
    type: definition.type ?? descriptor.type,
    decorator: definition.decorator,
    registration: descriptor as StrategyDefinition,
    definition,
  };
}

function slot<N extends string>(name: N, decorator: string): StrategyCatalogLine<N, never> {
  return { name, type: undefined, decorator, registration: undefined, definition: {} };
}

/**
 * The strategy catalog: every built-in place, one line per strategy section, outermost first.
 * Configuration sections and method decorators both compose in this order, whatever order they are
 * written in; `PipelineConfig` is derived from it. Adding a strategy is its folder plus one line here
 * (or, outside the package, one `registerStrategy` call).
 *
 * @publicApi
 */
export const STRATEGY_CATALOG = [
  catalogLine('fallback', fallbackStrategy),
  catalogLine('totalTimeout', timeoutStrategy),
  slot('pipeline', 'UseResiliencePipeline'),
  catalogLine('rateLimiter', rateLimiterStrategy),
  catalogLine('concurrencyLimiter', concurrencyLimiterStrategy),
  catalogLine('adaptiveConcurrency', adaptiveConcurrencyStrategy),
  catalogLine('hedging', hedgingStrategy),
  catalogLine('retry', retryStrategy),
  catalogLine('adaptiveThrottling', adaptiveThrottlingStrategy),
  catalogLine('circuitBreaker', circuitBreakerStrategy),
  catalogLine('timeout', timeoutStrategy),
  catalogLine('chaosLatency', chaosLatencyStrategy),
  catalogLine('chaosFault', chaosFaultStrategy),
] as const;

/** @deprecated Use `STRATEGY_CATALOG`. @publicApi */
export const STRATEGY_SECTIONS = STRATEGY_CATALOG;

/** The name of a line of the built-in catalog (a configuration section, or the `pipeline` slot). @publicApi */
export type CatalogLineName = (typeof STRATEGY_CATALOG)[number]['name'];

/** @deprecated Use `CatalogLineName`. @publicApi */
export type StrategySectionName = CatalogLineName;

/** Where `registerStrategy` puts a line: before or after a line of the catalog (default: innermost). @publicApi */
export interface CatalogPosition {
  /** The line the new one goes right before (outside of it). */
  readonly before?: string;
  /** The line the new one goes right after (inside of it). */
  readonly after?: string;
}

let catalog: readonly StrategyCatalogLine[] = STRATEGY_CATALOG;

/** Every line of the catalog: the built-in ones and those `registerStrategy` added, outermost first. @publicApi */
export function strategyCatalog(): readonly StrategyCatalogLine[] {
  return catalog;
}

/**
 * Adds a strategy section of one's own to the catalog at runtime (a strategy defined outside the
 * package): configuration, YAML, the decorator factory, the logger, OpenTelemetry, the admin API and
 * the dashboard pick it up. Declare its data type on `PipelineConfig` by declaration merging. A name
 * already in the catalog is refused.
 *
 * @publicApi
 */
export function registerStrategy<N extends string, C extends Record<string, unknown>>(
  name: N & keyof C,
  descriptor: AnyStrategyDefinition & { readonly sections?: { readonly [S in keyof C]: { readonly __config?: C[S] } } },
  position: CatalogPosition = {},
): StrategyCatalogLine<N, C[N]> {
  if (catalog.some((line) => line.name === name)) throw new Error(CONFIG_RULES.sectionTaken(name));
  const line = catalogLine<N, C>(name, descriptor);
  const anchor = position.before ?? position.after;
  const at = anchor === undefined ? -1 : catalog.findIndex((l) => l.name === anchor);
  if (anchor !== undefined && at < 0) throw new Error(CONFIG_RULES.noCatalogLine(anchor));
  const index = at < 0 ? catalog.length : position.before !== undefined ? at : at + 1;
  catalog = [...catalog.slice(0, index), line, ...catalog.slice(index)];
  return line;
}

/** Takes a line `registerStrategy` added out of the catalog again (tests); built-in lines stay. @publicApi */
export function unregisterStrategy(name: string): void {
  if (STRATEGY_CATALOG.some((line) => line.name === name)) return;
  catalog = catalog.filter((line) => line.name !== name);
}
