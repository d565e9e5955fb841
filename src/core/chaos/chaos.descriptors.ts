import type { ResilienceEventDescriptor } from '../telemetry/event.catalog.js';
import type { ResilienceEventMap } from '../telemetry/resilience-event.model.js';
import type { StrategyDescriptor } from '../strategy/resilience-strategy.interface.js';
import { defineStrategy, section } from '../strategy/strategy.descriptor.js';
import {
  CHAOS_BEHAVIOR_OPTIONS,
  CHAOS_LATENCY_OPTIONS,
  CHAOS_OUTCOME_OPTIONS,
  checkChaosBehaviorOptions,
  checkChaosOutcomeOptions,
  CHAOS_FAULT_OPTIONS,
  validateChaosFaultOptions,
  type ChaosBehaviorOptions,
  type ChaosFaultOptions,
  type ChaosLatencyOptions,
  type ChaosOutcomeOptions,
} from './chaos.options.js';
import {
  ChaosBehaviorStrategy,
  ChaosFaultStrategy,
  ChaosLatencyStrategy,
  ChaosOutcomeStrategy,
} from './chaos.strategies.js';

/** A fault to inject; `message` makes an `Error` with that message. @publicApi */
export type ChaosFaultConfig = Omit<ChaosFaultOptions, 'fault'> & { fault?: unknown; message?: string };

/** The `chaosLatency` section: `ChaosLatencyOptions`. @publicApi */
export type ChaosLatencyConfig = ChaosLatencyOptions;

const CHAOS_EVENTS: { readonly OnChaosInjected: ResilienceEventDescriptor<ResilienceEventMap['OnChaosInjected']> } = {
  OnChaosInjected: {
    severity: 'information',
    logAs: 'debug',
    describe: (a) => [{ label: 'kind', attribute: 'chaos.kind', value: a.kind }],
  },
};

/** Injects faults: `addChaosFault`, the `chaosFault` section (`message` makes the `Error`). @publicApi */
export const chaosFaultStrategy: StrategyDescriptor<ChaosFaultOptions, { chaosFault: ChaosFaultConfig }> =
  defineStrategy({
    type: 'chaos-fault',
    options: CHAOS_FAULT_OPTIONS,
    events: CHAOS_EVENTS,
    validate: validateChaosFaultOptions,
    create: (options, context) => new ChaosFaultStrategy(options, context),
    sections: {
      chaosFault: section<ChaosFaultConfig, ChaosFaultOptions>({
        // A `message` that is not a string stays an option, so validation names it (`must be a string`).
        fromConfig: ({ message, ...fault }) =>
          fault.fault !== undefined
            ? fault
            : typeof message === 'string'
              ? { ...fault, fault: new Error(message) }
              : { ...fault, message },
      }),
    },
  });

/** Injects latency: `addChaosLatency`, the `chaosLatency` section. @publicApi */
export const chaosLatencyStrategy: StrategyDescriptor<ChaosLatencyOptions, { chaosLatency: ChaosLatencyConfig }> =
  defineStrategy({
    type: 'chaos-latency',
    options: CHAOS_LATENCY_OPTIONS,
    events: CHAOS_EVENTS,
    create: (options, context) => new ChaosLatencyStrategy(options, context),
    sections: { chaosLatency: section<ChaosLatencyConfig>() },
  });

/** Injects an outcome: `addChaosOutcome`. @publicApi */
export const chaosOutcomeStrategy: StrategyDescriptor<
  ChaosOutcomeOptions<unknown>,
  Record<never, never>
> = defineStrategy({
  type: 'chaos-outcome',
  options: CHAOS_OUTCOME_OPTIONS,
  check: checkChaosOutcomeOptions,
  events: CHAOS_EVENTS,
  create: (options, context) => new ChaosOutcomeStrategy(options, context),
});

/** Injects a behaviour: `addChaosBehavior`. @publicApi */
export const chaosBehaviorStrategy: StrategyDescriptor<ChaosBehaviorOptions, Record<never, never>> = defineStrategy({
  type: 'chaos-behavior',
  options: CHAOS_BEHAVIOR_OPTIONS,
  check: checkChaosBehaviorOptions,
  events: CHAOS_EVENTS,
  create: (options, context) => new ChaosBehaviorStrategy(options, context),
});

/** @deprecated Use `chaosFaultStrategy`. @publicApi */
export const chaosFaultRegistration = chaosFaultStrategy;
/** @deprecated Use `chaosLatencyStrategy`. @publicApi */
export const chaosLatencyRegistration = chaosLatencyStrategy;
/** @deprecated Use `chaosOutcomeStrategy`. @publicApi */
export const chaosOutcomeRegistration = chaosOutcomeStrategy;
/** @deprecated Use `chaosBehaviorStrategy`. @publicApi */
export const chaosBehaviorRegistration = chaosBehaviorStrategy;
