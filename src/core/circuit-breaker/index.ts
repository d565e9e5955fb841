export * from './circuit-state.model.js';
export * from './circuit-breaker.constants.js';
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
export { defaultCircuitKey } from './circuit-breaker.strategy.js';
