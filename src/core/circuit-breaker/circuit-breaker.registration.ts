import { StrategyServiceKey, type StrategyDefinition } from '../resilience-strategy.interface.js';
import type { CircuitBreakerStateStore } from './circuit-breaker-state-store.interface.js';
import type { CircuitBreakerManualControl } from './circuit-breaker.manual-control.js';
import { validateCircuitBreakerOptions, type CircuitBreakerStrategyOptions } from './circuit-breaker.options.js';
import { CircuitBreakerStrategy, defaultCircuitKey } from './circuit-breaker.strategy.js';

/** Where the circuit breakers created from configuration keep their state. @publicApi */
export const CIRCUIT_STATE_STORE_SERVICE = new StrategyServiceKey<CircuitBreakerStateStore>('circuit-state-store');

/** The manual control given to circuit breakers from configuration that bring none. @publicApi */
export const CIRCUIT_CONTROL_SERVICE = new StrategyServiceKey<CircuitBreakerManualControl>('circuit-control');

/**
 * The circuit breaker: `addCircuitBreaker`, the `circuitBreaker` section, `@CircuitBreaker`. A method
 * naming a pipeline's section shares that pipeline's circuit.
 *
 * @publicApi
 */
export const circuitBreakerRegistration: StrategyDefinition<CircuitBreakerStrategyOptions<unknown>> = {
  type: 'circuit-breaker',
  events: [
    'OnCircuitOpened',
    'OnCircuitClosed',
    'OnCircuitHalfOpened',
    'OnCircuitRejected',
    'OnStateStoreUnavailable',
    'OnStateStoreRestored',
  ],
  validate: (v, options, pipeline) => validateCircuitBreakerOptions(v, options, pipeline),
  create: (options, context) => new CircuitBreakerStrategy(options, context),
  sections: {
    circuitBreaker: {
      decorator: 'CircuitBreaker',
      fromConfig: (config, env) => ({
        manualControl: env.service(CIRCUIT_CONTROL_SERVICE),
        ...config,
        stateStore: env.service(CIRCUIT_STATE_STORE_SERVICE),
      }),
      sharedWith: (config, pipelineName) => ({
        ...config,
        circuitKey: config.circuitKey ?? defaultCircuitKey(pipelineName, undefined, config.name as string | undefined),
      }),
    },
  },
};
