import './chaos.shortcuts.js';

export {
  DEFAULT_CHAOS_LATENCY,
  DEFAULT_INJECTION_RATE,
  type ChaosBehaviorOptions,
  type ChaosFaultOptions,
  type ChaosGeneratorArguments,
  type ChaosLatencyOptions,
  type ChaosOutcomeOptions,
  type ChaosStrategyOptions,
} from './chaos.options.js';
export {
  chaosBehaviorRegistration,
  chaosBehaviorStrategy,
  chaosFaultRegistration,
  chaosFaultStrategy,
  chaosLatencyRegistration,
  chaosLatencyStrategy,
  chaosOutcomeRegistration,
  chaosOutcomeStrategy,
  type ChaosFaultConfig,
  type ChaosLatencyConfig,
} from './chaos.descriptors.js';
