import type { ResilienceContext } from '../context/resilience.context.js';
import type { Outcome } from '../outcome/outcome.model.js';
import type { OptionsValidator } from '../strategy/options.validation.js';
import { option, optionKeys, validateOptions, type OptionsSchema } from '../strategy/options.schema.js';
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

const COMMON_OPTIONS: OptionsSchema<ChaosStrategyOptions> = {
  name: option.string(),
  injectionRate: option.number({ min: 0, max: 1 }, DEFAULT_INJECTION_RATE),
  injectionRateGenerator: option.func(),
  enabled: option.boolean(true),
  enabledGenerator: option.func(),
  random: option.func(),
};

/** Every option of `addChaosFault`. @internal */
export const CHAOS_FAULT_OPTIONS: OptionsSchema<ChaosFaultOptions> = {
  ...COMMON_OPTIONS,
  fault: option.data(),
  faultGenerator: option.func(),
  onFaultInjected: option.func(),
};

/** Every option of `addChaosLatency`. @internal */
export const CHAOS_LATENCY_OPTIONS: OptionsSchema<ChaosLatencyOptions> = {
  ...COMMON_OPTIONS,
  latency: option.duration({}, DEFAULT_CHAOS_LATENCY),
  latencyGenerator: option.func(),
  onLatencyInjected: option.func(),
};

/** Every option of `addChaosOutcome`. @internal */
export const CHAOS_OUTCOME_OPTIONS: OptionsSchema<ChaosOutcomeOptions> = {
  ...COMMON_OPTIONS,
  outcome: option.data(),
  outcomeGenerator: option.func(),
  onOutcomeInjected: option.func(),
};

/** Every option of `addChaosBehavior` (`behavior` is required, checked by `checkChaosBehaviorOptions`). @internal */
export const CHAOS_BEHAVIOR_OPTIONS: OptionsSchema<ChaosBehaviorOptions> = {
  ...COMMON_OPTIONS,
  behavior: option.custom({ kind: 'function' }),
  onBehaviorInjected: option.func(),
};

/** The options every chaos strategy takes. @internal */
export const CHAOS_COMMON_OPTION_KEYS = optionKeys(COMMON_OPTIONS);

/** The options of each chaos strategy besides the common ones. @internal */
export const CHAOS_KIND_OPTION_KEYS = {
  fault: ['fault', 'faultGenerator', 'onFaultInjected'],
  latency: ['latency', 'latencyGenerator', 'onLatencyInjected'],
  outcome: ['outcome', 'outcomeGenerator', 'onOutcomeInjected'],
  behavior: ['behavior', 'onBehaviorInjected'],
} as const;

/**
 * The fault strategy's validation: the `chaosFault` section's `message` (only one that is not a string
 * gets here) is reported first and counts as the fault.
 *
 * @internal
 */
export function validateChaosFaultOptions(v: OptionsValidator, o: ChaosFaultOptions): void {
  const message = (o as { message?: unknown }).message;
  if (message !== undefined) v.add('message', message, RULES.string);
  validateOptions(v, CHAOS_FAULT_OPTIONS, o, message !== undefined ? ['message'] : []);
  if (o.fault === undefined && o.faultGenerator === undefined && message === undefined)
    v.add('fault', undefined, RULES.requiredOr('faultGenerator'));
}

/** What the schema cannot check of `addChaosOutcome`: an outcome or its generator. @internal */
export function checkChaosOutcomeOptions(v: OptionsValidator, o: ChaosOutcomeOptions<unknown>): void {
  if (o.outcome === undefined && o.outcomeGenerator === undefined)
    v.add('outcome', undefined, RULES.requiredOr('outcomeGenerator'));
  if (o.outcome !== undefined && (o.outcome === null || typeof o.outcome.ok !== 'boolean')) {
    v.add('outcome', o.outcome, RULES.outcome);
  }
}

/** What the schema cannot check of `addChaosBehavior`: the behaviour is required. @internal */
export function checkChaosBehaviorOptions(v: OptionsValidator, o: ChaosBehaviorOptions): void {
  if (v.required('behavior', o.behavior)) v.func('behavior', o.behavior);
}
