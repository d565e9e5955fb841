import type { PredicateReference } from '../outcome/outcome.predicates.js';
import { StrategyServiceKey, type StrategyDescriptor } from '../strategy/resilience-strategy.interface.js';
import { defineStrategy, section } from '../strategy/strategy.descriptor.js';
import type { CircuitBreakerStateStore } from './circuit-breaker-state-store.interface.js';
import type { CircuitBreakerManualControl } from './circuit-breaker.manual-control.js';
import {
  checkCircuitBreakerOptions,
  CIRCUIT_BREAKER_OPTIONS,
  type CircuitBreakerStrategyOptions,
} from './circuit-breaker.options.js';
import { CircuitBreakerStrategy, defaultCircuitKey } from './circuit-breaker.strategy.js';

/** Where the circuit breakers created from configuration keep their state. @publicApi */
export const CIRCUIT_STATE_STORE_SERVICE = new StrategyServiceKey<CircuitBreakerStateStore>('circuit-state-store');

/** The manual control given to circuit breakers from configuration that bring none. @publicApi */
export const CIRCUIT_CONTROL_SERVICE = new StrategyServiceKey<CircuitBreakerManualControl>('circuit-control');

/** The `circuitBreaker` section: `CircuitBreakerStrategyOptions` with `shouldHandle` as a predicate reference (the store comes from the module). @publicApi */
export type CircuitBreakerConfig = Omit<CircuitBreakerStrategyOptions<unknown>, 'shouldHandle' | 'stateStore'> & {
  shouldHandle?: PredicateReference;
};

const storeOutcome = (a: { readonly error: unknown }) => ({ ok: false as const, error: a.error });

/**
 * The circuit breaker: `addCircuitBreaker`, the `circuitBreaker` section, `@CircuitBreaker`. A method
 * naming a pipeline's section shares that pipeline's circuit. Inspection reads it through its `circuit` port.
 *
 * @publicApi
 */
export const circuitBreakerStrategy: StrategyDescriptor<
  CircuitBreakerStrategyOptions<unknown>,
  { circuitBreaker: CircuitBreakerConfig }
> = defineStrategy({
  type: 'circuit-breaker',
  options: CIRCUIT_BREAKER_OPTIONS,
  check: checkCircuitBreakerOptions,
  events: {
    OnCircuitOpened: {
      severity: 'error',
      changesState: true,
      describe: (a) => [
        { attribute: 'circuit.state', value: 'open' },
        { label: 'reason', attribute: 'circuit.reason', value: a.reason },
        { label: 'breakDuration', attribute: 'circuit.break_duration', value: a.breakDuration, unit: 'ms' },
        ...(a.health ? [{ label: 'failures', value: `${a.health.failures}/${a.health.throughput}` }] : []),
      ],
    },
    OnCircuitClosed: {
      severity: 'information',
      changesState: true,
      describe: (a) => [
        { attribute: 'circuit.state', value: 'closed' },
        { label: 'reason', attribute: 'circuit.reason', value: a.reason },
      ],
    },
    OnCircuitHalfOpened: {
      severity: 'warning',
      changesState: true,
      describe: () => [{ attribute: 'circuit.state', value: 'half-open' }],
    },
    OnCircuitRejected: {
      severity: 'debug',
      changesState: true,
      describe: (a) => [
        { label: 'state', attribute: 'circuit.state', value: a.state },
        ...(a.retryAfter === undefined
          ? []
          : [{ label: 'retryAfter', attribute: 'retry.after', value: a.retryAfter, unit: 'ms' as const }]),
      ],
    },
    OnStateStoreUnavailable: { severity: 'error', outcome: storeOutcome },
    OnStateStoreRestored: { severity: 'information' }, // no outcome: nothing failed
  },
  create: (options, context) => new CircuitBreakerStrategy(options, context),
  ports: ['circuit'],
  sections: {
    circuitBreaker: section<CircuitBreakerConfig, CircuitBreakerStrategyOptions<unknown>>({
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
    }),
  },
});

/** @deprecated Use `circuitBreakerStrategy`. @publicApi */
export const circuitBreakerRegistration = circuitBreakerStrategy;
