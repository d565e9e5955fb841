import './circuit-breaker.shortcuts.js';

export {
  CIRCUIT_SNAPSHOT_VERSION,
  type BreakDurationGeneratorArguments,
  type CircuitAcquireResult,
  type CircuitBreakerKind,
  type CircuitCallResult,
  type CircuitHealth,
  type CircuitMetricsSnapshot,
  type CircuitPermit,
  type CircuitPolicy,
  type CircuitSnapshot,
  type CircuitState,
  type CircuitTransition,
  type CircuitTransitionReason,
} from './circuit-state.model.js';
export {
  DEFAULT_BREAK_DURATION,
  DEFAULT_CIRCUIT_BREAKER_KIND,
  DEFAULT_FAILURE_RATIO,
  DEFAULT_FAILURE_THRESHOLD,
  DEFAULT_MAX_HALF_OPEN_WAIT,
  DEFAULT_MINIMUM_THROUGHPUT,
  DEFAULT_PERMITTED_CALLS_IN_HALF_OPEN,
  DEFAULT_SAMPLING_DURATION,
  DEFAULT_SLOW_CALL_DURATION,
  DEFAULT_WINDOW_SIZE,
  MAX_WINDOW_SIZE,
} from './circuit-breaker.constants.js';
export type { CircuitBreakerStateStore, MaybePromise } from './circuit-breaker-state-store.interface.js';
export { InMemoryCircuitBreakerStateStore } from './in-memory-circuit-breaker-state.store.js';
export { CircuitBreakerManualControl } from './circuit-breaker.manual-control.js';
export { CircuitBreakerStateProvider } from './circuit-breaker.state-provider.js';
export type {
  CircuitBreakerPredicateArguments,
  CircuitBreakerStrategyOptions,
  OnCircuitClosedArguments,
  OnCircuitHalfOpenedArguments,
  OnCircuitOpenedArguments,
  OnCircuitStateChangeArguments,
} from './circuit-breaker.options.js';
export { defaultCircuitKey, type CircuitPort } from './circuit-breaker.strategy.js';
export {
  CIRCUIT_CONTROL_SERVICE,
  CIRCUIT_STATE_STORE_SERVICE,
  circuitBreakerRegistration,
  circuitBreakerStrategy,
  type CircuitBreakerConfig,
} from './circuit-breaker.descriptor.js';
