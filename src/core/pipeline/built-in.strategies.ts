import { adaptiveConcurrencyRegistration } from '../adaptive-concurrency/adaptive-concurrency.registration.js';
import { adaptiveThrottlingRegistration } from '../adaptive-throttling/adaptive-throttling.registration.js';
import { chaosFaultRegistration, chaosLatencyRegistration } from '../chaos/chaos.registrations.js';
import { circuitBreakerRegistration } from '../circuit-breaker/circuit-breaker.registration.js';
import { concurrencyLimiterRegistration } from '../concurrency-limiter/concurrency-limiter.registration.js';
import { fallbackRegistration } from '../fallback/fallback.registration.js';
import { hedgingRegistration } from '../hedging/hedging.registration.js';
import { rateLimiterRegistration } from '../rate-limiter/rate-limiter.registration.js';
import type { StrategyDefinition, StrategySectionDefinition } from '../resilience-strategy.interface.js';
import { retryRegistration } from '../retry/retry.registration.js';
import { timeoutRegistration } from '../timeout/timeout.registration.js';

/**
 * One place in the composition order: a configuration section and the strategy it adds, or a slot for a
 * decorator without a section (`@UseResiliencePipeline`, a whole named pipeline).
 *
 * @publicApi
 */
export interface StrategySection<N extends string = string> {
  /** The section's name in a `PipelineConfig` (`retry`, `timeout`, …). */
  readonly name: N;
  /** The decorator of the same place (`Retry`), if there is one. */
  readonly decorator: string | undefined;
  /** The strategy the section adds; `undefined` for a slot without a configuration section. */
  readonly registration: StrategyDefinition | undefined;
  /** How the section's data maps to the strategy (`registration.sections[name]`). */
  readonly definition: StrategySectionDefinition<object>;
}

function section<N extends string>(name: N, registration: StrategyDefinition): StrategySection<N> {
  const definition = registration.sections?.[name];
  // Stryker disable next-line StringLiteral: unreachable through the API — every built-in registration below has its section (a missing one would fail this module's import)
  if (!definition) throw new Error(`The ${registration.type} strategy has no "${name}" section.`);
  return { name, decorator: definition.decorator, registration, definition };
}

function slot<N extends string>(name: N, decorator: string): StrategySection<N> {
  return { name, decorator, registration: undefined, definition: {} };
}

/**
 * Every built-in place, outermost first. Configuration sections and method decorators both compose in
 * this order, whatever order they are written in. Adding a strategy to configuration and decorators is
 * one line here (plus the strategy's own folder).
 *
 * @publicApi
 */
export const STRATEGY_SECTIONS = [
  section('fallback', fallbackRegistration),
  section('totalTimeout', timeoutRegistration),
  slot('pipeline', 'UseResiliencePipeline'),
  section('rateLimiter', rateLimiterRegistration),
  section('concurrencyLimiter', concurrencyLimiterRegistration),
  section('adaptiveConcurrency', adaptiveConcurrencyRegistration),
  section('hedging', hedgingRegistration),
  section('retry', retryRegistration),
  section('adaptiveThrottling', adaptiveThrottlingRegistration),
  section('circuitBreaker', circuitBreakerRegistration),
  section('timeout', timeoutRegistration),
  section('chaosLatency', chaosLatencyRegistration),
  section('chaosFault', chaosFaultRegistration),
] as const;

/** The name of a place in `STRATEGY_SECTIONS`. @publicApi */
export type StrategySectionName = (typeof STRATEGY_SECTIONS)[number]['name'];
