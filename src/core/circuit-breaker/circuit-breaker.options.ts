import type { ResilienceContext } from '../context/resilience.context.js';
import type { Outcome } from '../outcome/outcome.model.js';
import type { OptionsValidator } from '../strategy/options.validation.js';
import type { CircuitBreakerStateStore } from './circuit-breaker-state-store.interface.js';
import type { CircuitBreakerManualControl } from './circuit-breaker.manual-control.js';
import type { CircuitBreakerStateProvider } from './circuit-breaker.state-provider.js';
import type {
  BreakDurationGeneratorArguments,
  CircuitBreakerKind,
  CircuitHealth,
  CircuitState,
  CircuitTransitionReason,
} from './circuit-state.model.js';
import {
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
import { option, optionKeys, type OptionsSchema } from '../strategy/options.schema.js';
import { RULES } from '../resilience.messages.js';

/** What `shouldHandle` of a circuit breaker receives: the call's outcome and context. @publicApi */
export interface CircuitBreakerPredicateArguments<T> {
  /** The outcome of the call. */
  readonly outcome: Outcome<T>;
  /** The call's context. */
  readonly context: ResilienceContext;
}

/** What `onOpened` receives when the circuit opens. @publicApi */
export interface OnCircuitOpenedArguments<T> {
  /** The context of the call during which it opened (a new, empty one when isolated by hand). */
  readonly context: ResilienceContext;
  /** The failure that opened the circuit; absent when it opened on a hung probe or by hand. */
  readonly outcome: Outcome<T> | undefined;
  /** How long the circuit stays open, in milliseconds (`Infinity` when isolated by hand: until closed). */
  readonly breakDuration: number;
  /** Why it opened. */
  readonly reason: CircuitTransitionReason;
  /** The measurements that tripped it. */
  readonly health: CircuitHealth | undefined;
  /** Whether `CircuitBreakerManualControl.isolate()` opened it. */
  readonly isManual: boolean;
}

/** What `onClosed` receives when the circuit closes. @publicApi */
export interface OnCircuitClosedArguments<T> {
  /** The context of the call that closed it; absent when closed by hand. */
  readonly context: ResilienceContext | undefined;
  /** The probe outcome that closed the circuit; absent when closed by hand. */
  readonly outcome: Outcome<T> | undefined;
  /** Why it closed. */
  readonly reason: CircuitTransitionReason;
  /** Whether `CircuitBreakerManualControl.close()` closed it. */
  readonly isManual: boolean;
}

/** What `onHalfOpened` receives when the break has elapsed and a probe is let through. @publicApi */
export interface OnCircuitHalfOpenedArguments {
  /** The context of the call that found the break elapsed. */
  readonly context: ResilienceContext;
}

/** What `onStateChange` receives on every transition, whatever its cause. @publicApi */
export interface OnCircuitStateChangeArguments {
  /** The state before. */
  readonly from: CircuitState;
  /** The state after. */
  readonly to: CircuitState;
  /** Why it changed. */
  readonly reason: CircuitTransitionReason;
  /** The call during which the change happened; absent for manual changes. */
  readonly context: ResilienceContext | undefined;
}

/** Options of `addCircuitBreaker` (and the `circuitBreaker` section of a pipeline configuration). @publicApi */
export interface CircuitBreakerStrategyOptions<T = unknown> {
  /** Names the strategy in telemetry, error messages and (with the pipeline name) the circuit key. */
  name?: string;
  /** When the circuit opens. Default `time-window` (Polly v8's only kind). */
  kind?: CircuitBreakerKind;
  /** `consecutive`: failures in a row that open the circuit. Default 5. */
  failureThreshold?: number;
  /** Ratio kinds: the failure ratio in (0, 1] that opens the circuit (inclusive). Default 0.1. */
  failureRatio?: number;
  /** Ratio kinds: calls measured before the ratio counts. Default 100. */
  minimumThroughput?: number;
  /** `time-window` and `slow-call`: the measured window, in milliseconds. Default 30000. */
  samplingDuration?: number;
  /** `count-window`: how many recent calls are measured. Default 100. */
  windowSize?: number;
  /** `slow-call`: calls that take at least this long count as failures. Default 60000. */
  slowCallDuration?: number;
  /** How long the circuit stays open. Default 5000. */
  breakDuration?: number;
  /** Computes each break instead (e.g. longer after each failed probe). */
  breakDurationGenerator?: (args: BreakDurationGeneratorArguments) => number;
  /** Probe calls a half-open circuit admits at a time. Default 1. */
  permittedCallsInHalfOpen?: number;
  /**
   * Successful probes needed to close; any failed probe opens again. Default: `permittedCallsInHalfOpen`.
   * It may exceed `permittedCallsInHalfOpen`: probes are then admitted `permittedCallsInHalfOpen` at a
   * time (each success frees a place) until the threshold is reached.
   */
  successThresholdInHalfOpen?: number;
  /**
   * What callers get while a half-open circuit has no probe permit left: `BrokenCircuitError` with
   * `retryAfter` (default), or — when true — they wait for the verdict and then run or are rejected.
   */
  waitForHalfOpenVerdict?: boolean;
  /** How long a half-open circuit waits for its probes before treating them as failed. Default 30000. */
  maxHalfOpenWait?: number;
  /** Which outcomes count as failures. Default: every error except cancellation. */
  shouldHandle?: (args: CircuitBreakerPredicateArguments<T>) => boolean | PromiseLike<boolean>;
  /** Called when the circuit opens (threshold reached, a probe failed, or isolated by hand). */
  onOpened?: (args: OnCircuitOpenedArguments<T>) => void | PromiseLike<void>;
  /** Called when the circuit closes (probes succeeded, or closed by hand). */
  onClosed?: (args: OnCircuitClosedArguments<T>) => void | PromiseLike<void>;
  /** Called when the break has elapsed and the circuit lets probes through. */
  onHalfOpened?: (args: OnCircuitHalfOpenedArguments) => void | PromiseLike<void>;
  /** Every transition, including manual ones. */
  onStateChange?: (args: OnCircuitStateChangeArguments) => void | PromiseLike<void>;
  /** Isolates and closes this breaker (and any others given the same control). */
  manualControl?: CircuitBreakerManualControl;
  /** Reads this breaker's state. */
  stateProvider?: CircuitBreakerStateProvider;
  /** Where the state lives. Default: a private in-memory store. */
  stateStore?: CircuitBreakerStateStore;
  /** The key of this circuit in the store. Default: pipeline name, instance name and strategy name. */
  circuitKey?: string;
}

const KIND_OPTIONS: Record<CircuitBreakerKind, readonly string[]> = {
  consecutive: ['failureThreshold'],
  'time-window': ['failureRatio', 'minimumThroughput', 'samplingDuration'],
  'count-window': ['failureRatio', 'minimumThroughput', 'windowSize'],
  'slow-call': ['failureRatio', 'minimumThroughput', 'samplingDuration', 'slowCallDuration'],
};

const KIND_SPECIFIC = [
  'failureThreshold',
  'failureRatio',
  'minimumThroughput',
  'samplingDuration',
  'windowSize',
  'slowCallDuration',
];

/** Every option of the circuit breaker, with its rule and default. @internal */
export const CIRCUIT_BREAKER_OPTIONS: OptionsSchema<CircuitBreakerStrategyOptions> = {
  name: option.string(),
  kind: option.oneOf(Object.keys(KIND_OPTIONS), DEFAULT_CIRCUIT_BREAKER_KIND),
  failureThreshold: option.number({ min: 1, integer: true }, DEFAULT_FAILURE_THRESHOLD),
  failureRatio: option.number({ min: 0, exclusiveMin: true, max: 1 }, DEFAULT_FAILURE_RATIO),
  minimumThroughput: option.number({ min: 1, integer: true }, DEFAULT_MINIMUM_THROUGHPUT),
  samplingDuration: option.duration({ min: 10 }, DEFAULT_SAMPLING_DURATION),
  windowSize: option.number({ min: 1, max: MAX_WINDOW_SIZE, integer: true }, DEFAULT_WINDOW_SIZE),
  slowCallDuration: option.duration({ min: 1 }, DEFAULT_SLOW_CALL_DURATION),
  breakDuration: option.duration({ min: 1 }, DEFAULT_BREAK_DURATION),
  breakDurationGenerator: option.func(),
  permittedCallsInHalfOpen: option.number({ min: 1, max: 10_000, integer: true }, DEFAULT_PERMITTED_CALLS_IN_HALF_OPEN),
  successThresholdInHalfOpen: option.number({ min: 1, max: 10_000, integer: true }),
  waitForHalfOpenVerdict: option.boolean(),
  maxHalfOpenWait: option.duration({ min: 1 }, DEFAULT_MAX_HALF_OPEN_WAIT),
  shouldHandle: option.func(),
  onOpened: option.func(),
  onClosed: option.func(),
  onHalfOpened: option.func(),
  onStateChange: option.func(),
  manualControl: option.data(),
  stateProvider: option.data(),
  stateStore: option.data(),
  circuitKey: option.custom({ kind: 'data', check: (v, key, value) => v.string(key, value) }),
};

const SERVICE_TYPES = {
  stateStore: 'CircuitBreakerStateStore',
  manualControl: 'CircuitBreakerManualControl',
  stateProvider: 'CircuitBreakerStateProvider',
} as const;

/** @internal */
export const CIRCUIT_BREAKER_OPTION_KEYS = optionKeys(CIRCUIT_BREAKER_OPTIONS);

/** What the schema cannot check: options of another kind, the count window, the services, the circuit key. @internal */
export function checkCircuitBreakerOptions(
  v: OptionsValidator,
  o: CircuitBreakerStrategyOptions<unknown>,
  pipeline: { readonly name?: string },
): void {
  const kind = o.kind ?? 'time-window';
  if (typeof kind === 'string' && Object.hasOwn(KIND_OPTIONS, kind)) {
    for (const key of KIND_SPECIFIC) {
      if ((o as Record<string, unknown>)[key] !== undefined && !KIND_OPTIONS[kind].includes(key)) {
        const kinds = (Object.keys(KIND_OPTIONS) as CircuitBreakerKind[]).filter((k) => KIND_OPTIONS[k].includes(key));
        v.add(key, (o as Record<string, unknown>)[key], RULES.onlyForKinds(kinds, kind));
      }
    }
  }
  if (
    o.kind === 'count-window' &&
    typeof o.minimumThroughput === 'number' &&
    o.minimumThroughput > (o.windowSize ?? 100)
  ) {
    v.add('minimumThroughput', o.minimumThroughput, RULES.circuitNeverOpens(o.windowSize ?? 100));
  }
  for (const [key, method] of [
    ['stateStore', 'acquire'],
    ['manualControl', 'isolate'],
    ['stateProvider', 'exportSnapshot'],
  ] as const) {
    const value = (o as Record<string, unknown>)[key];
    if (value !== undefined && typeof (value as Record<string, unknown>)?.[method] !== 'function') {
      v.add(key, value, RULES.instanceOf(SERVICE_TYPES[key]));
    }
  }
  if (o.stateStore !== undefined && o.circuitKey === undefined && pipeline.name === undefined) {
    v.add('circuitKey', undefined, RULES.circuitKeyRequired);
  }
}
