import type { StrategyDefinition } from '../resilience-strategy.interface.js';
import {
  validateChaosBehaviorOptions,
  validateChaosFaultOptions,
  validateChaosLatencyOptions,
  validateChaosOutcomeOptions,
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

/** Injects faults: `addChaosFault`, the `chaosFault` section (`message` makes the `Error`). @publicApi */
export const chaosFaultRegistration: StrategyDefinition<ChaosFaultOptions> = {
  type: 'chaos-fault',
  events: ['OnChaosInjected'],
  validate: validateChaosFaultOptions,
  create: (options, context) => new ChaosFaultStrategy(options, context),
  sections: {
    chaosFault: {
      // A `message` that is not a string stays an option, so validation names it (`must be a string`).
      fromConfig: ({ message, ...fault }) =>
        fault.fault !== undefined
          ? fault
          : typeof message === 'string'
            ? { ...fault, fault: new Error(message) }
            : { ...fault, message },
    },
  },
};

/** Injects latency: `addChaosLatency`, the `chaosLatency` section. @publicApi */
export const chaosLatencyRegistration: StrategyDefinition<ChaosLatencyOptions> = {
  type: 'chaos-latency',
  events: ['OnChaosInjected'],
  validate: validateChaosLatencyOptions,
  create: (options, context) => new ChaosLatencyStrategy(options, context),
  sections: { chaosLatency: {} },
};

/** Injects an outcome: `addChaosOutcome`. @publicApi */
export const chaosOutcomeRegistration: StrategyDefinition<ChaosOutcomeOptions<unknown>> = {
  type: 'chaos-outcome',
  events: ['OnChaosInjected'],
  validate: validateChaosOutcomeOptions,
  create: (options, context) => new ChaosOutcomeStrategy(options, context),
};

/** Injects a behaviour: `addChaosBehavior`. @publicApi */
export const chaosBehaviorRegistration: StrategyDefinition<ChaosBehaviorOptions> = {
  type: 'chaos-behavior',
  events: ['OnChaosInjected'],
  validate: validateChaosBehaviorOptions,
  create: (options, context) => new ChaosBehaviorStrategy(options, context),
};
