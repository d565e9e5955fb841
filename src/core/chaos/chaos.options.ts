import type { ResilienceContext } from '../context/resilience.context.js';
import type { Outcome } from '../outcome.model.js';
import type { OptionsValidator } from '../utils/options.validation.js';
import { RULES } from '../resilience.messages.js';

/** What the generators of a chaos strategy receive: the call's context. @publicApi */
export interface ChaosGeneratorArguments {
  /** The call's context. */
  readonly context: ResilienceContext;
}

/** What every chaos strategy shares (Simmy's `ChaosStrategyOptions`). @publicApi */
export interface ChaosStrategyOptions {
  /** Names the strategy in telemetry and validation messages. */
  name?: string;
  /** The share of calls injected, in [0, 1]. Default 0.001 (as Simmy). */
  injectionRate?: number;
  /** Computes the rate per call instead. */
  injectionRateGenerator?: (args: ChaosGeneratorArguments) => number | PromiseLike<number>;
  /** Default true. */
  enabled?: boolean;
  /** Decides per call whether the strategy is on. */
  enabledGenerator?: (args: ChaosGeneratorArguments) => boolean | PromiseLike<boolean>;
  /** Random source in [0, 1) deciding each injection. Default: the pipeline's. */
  random?: () => number;
}

/** Options of `addChaosFault`: throws `fault` instead of calling, at `injectionRate`. @publicApi */
export interface ChaosFaultOptions extends ChaosStrategyOptions {
  /** The error thrown instead of calling. Give this or `faultGenerator`. */
  fault?: unknown;
  /** Computes the error per call instead of `fault`. */
  faultGenerator?: (args: ChaosGeneratorArguments) => unknown;
  /** Called when a fault is thrown instead of calling. */
  onFaultInjected?: (args: ChaosGeneratorArguments & { readonly fault: unknown }) => void | PromiseLike<void>;
}

/** Options of `addChaosLatency`: waits `latency` milliseconds before calling, at `injectionRate`. @publicApi */
export interface ChaosLatencyOptions extends ChaosStrategyOptions {
  /** Milliseconds added before the call. Default 30000 (as Simmy). */
  latency?: number;
  /** Computes the latency per call instead of `latency`, in milliseconds. */
  latencyGenerator?: (args: ChaosGeneratorArguments) => number | PromiseLike<number>;
  /** Called when latency is added to a call. */
  onLatencyInjected?: (args: ChaosGeneratorArguments & { readonly latency: number }) => void | PromiseLike<void>;
}

/** Options of `addChaosOutcome`: returns `outcome` instead of calling, at `injectionRate`. @publicApi */
export interface ChaosOutcomeOptions<T = unknown> extends ChaosStrategyOptions {
  /** The outcome returned instead of calling. Give this or `outcomeGenerator`. */
  outcome?: Outcome<T>;
  /** Computes the outcome per call instead of `outcome`; `undefined` lets the call run. */
  outcomeGenerator?: (args: ChaosGeneratorArguments) => Outcome<T> | undefined | PromiseLike<Outcome<T> | undefined>;
  /** Called when an outcome is returned instead of calling. */
  onOutcomeInjected?: (args: ChaosGeneratorArguments & { readonly outcome: Outcome<T> }) => void | PromiseLike<void>;
}

/** Options of `addChaosBehavior`: runs `behavior` before calling, at `injectionRate`. @publicApi */
export interface ChaosBehaviorOptions extends ChaosStrategyOptions {
  /** Runs before the call (e.g. drops a connection, fills a disk). Required. */
  behavior?: (args: ChaosGeneratorArguments) => void | PromiseLike<void>;
  /** Called after `behavior` ran for a call. */
  onBehaviorInjected?: (args: ChaosGeneratorArguments) => void | PromiseLike<void>;
}

/** Simmy's default injection rate. @publicApi */
export const DEFAULT_INJECTION_RATE = 0.001;
/** Simmy's default latency. @publicApi */
export const DEFAULT_CHAOS_LATENCY = 30_000;

/** The options every chaos strategy accepts. @internal */
export const CHAOS_COMMON_OPTION_KEYS = [
  'name',
  'injectionRate',
  'injectionRateGenerator',
  'enabled',
  'enabledGenerator',
  'random',
] as const;

/** The options of each chaos strategy besides the common ones. @internal */
export const CHAOS_KIND_OPTION_KEYS = {
  fault: ['fault', 'faultGenerator', 'onFaultInjected'],
  latency: ['latency', 'latencyGenerator', 'onLatencyInjected'],
  outcome: ['outcome', 'outcomeGenerator', 'onOutcomeInjected'],
  behavior: ['behavior', 'onBehaviorInjected'],
} as const;

const COMMON = CHAOS_COMMON_OPTION_KEYS;

function validateCommon(v: OptionsValidator, o: ChaosStrategyOptions, extra: readonly string[]): void {
  v.knownKeys(o, [...COMMON, ...extra])
    .string('name', o.name)
    .number('injectionRate', o.injectionRate, { min: 0, max: 1 })
    .func('injectionRateGenerator', o.injectionRateGenerator)
    .boolean('enabled', o.enabled)
    .func('enabledGenerator', o.enabledGenerator)
    .func('random', o.random);
}

/** @internal */
export function validateChaosFaultOptions(v: OptionsValidator, o: ChaosFaultOptions): void {
  const fromConfig = o as { message?: unknown };
  // Only the `chaosFault` configuration section takes a `message` (and only one that is not a string gets here).
  if (fromConfig.message !== undefined) v.add('message', fromConfig.message, RULES.string);
  const options: string[] = [...CHAOS_KIND_OPTION_KEYS.fault];
  if (fromConfig.message !== undefined) options.push('message');
  validateCommon(v, o, options);
  v.func('faultGenerator', o.faultGenerator).func('onFaultInjected', o.onFaultInjected);
  if (o.fault === undefined && o.faultGenerator === undefined && fromConfig.message === undefined)
    v.add('fault', undefined, RULES.requiredOr('faultGenerator'));
}

/** @internal */
export function validateChaosLatencyOptions(v: OptionsValidator, o: ChaosLatencyOptions): void {
  validateCommon(v, o, CHAOS_KIND_OPTION_KEYS.latency);
  v.duration('latency', o.latency)
    .func('latencyGenerator', o.latencyGenerator)
    .func('onLatencyInjected', o.onLatencyInjected);
}

/** @internal */
export function validateChaosOutcomeOptions(v: OptionsValidator, o: ChaosOutcomeOptions<unknown>): void {
  validateCommon(v, o, CHAOS_KIND_OPTION_KEYS.outcome);
  v.func('outcomeGenerator', o.outcomeGenerator).func('onOutcomeInjected', o.onOutcomeInjected);
  if (o.outcome === undefined && o.outcomeGenerator === undefined)
    v.add('outcome', undefined, RULES.requiredOr('outcomeGenerator'));
  if (o.outcome !== undefined && (o.outcome === null || typeof o.outcome.ok !== 'boolean')) {
    v.add('outcome', o.outcome, RULES.outcome);
  }
}

/** @internal */
export function validateChaosBehaviorOptions(v: OptionsValidator, o: ChaosBehaviorOptions): void {
  validateCommon(v, o, CHAOS_KIND_OPTION_KEYS.behavior);
  v.func('onBehaviorInjected', o.onBehaviorInjected);
  if (v.required('behavior', o.behavior)) v.func('behavior', o.behavior);
}
