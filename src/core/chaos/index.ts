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
  chaosFaultRegistration,
  chaosLatencyRegistration,
  chaosOutcomeRegistration,
} from './chaos.registrations.js';
