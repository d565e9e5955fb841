import { describe, expect, it } from '@jest/globals';
import {
  CircuitBreakerManualControl,
  CircuitBreakerStateProvider,
  InMemoryCircuitBreakerStateStore,
  MAX_TIMER_DELAY,
  ResiliencePipelineBuilder,
  ResilienceValidationError,
} from '../../../src/core.entry.js';

const PREFIX = 'strategies[0] (circuit-breaker).';

/** The problems `build()` reports for one breaker, paths relative to the breaker; [] if it builds. */
function problems(options: Record<string, unknown>, pipelineName?: string): { path: string; rule: string }[] {
  try {
    new ResiliencePipelineBuilder(pipelineName === undefined ? {} : { name: pipelineName })
      .addCircuitBreaker(options)
      .build();
    return [];
  } catch (error) {
    expect(error).toBeInstanceOf(ResilienceValidationError);
    const head = pipelineName === undefined ? PREFIX : `pipeline "${pipelineName}".${PREFIX}`;
    return (error as ResilienceValidationError).issues.map((i) => {
      expect(i.path.startsWith(head)).toBe(true);
      return { path: i.path.slice(head.length), rule: i.rule };
    });
  }
}

const ratioKinds = 'must be one of "consecutive", "time-window", "count-window", "slow-call"';

describe('circuit breaker options', () => {
  // [options, path, rule]: each option out of its range, next to the nearest value inside it.
  const invalid: [Record<string, unknown>, string, string][] = [
    [{ name: '' }, 'name', 'must be a non-empty string'],
    [{ name: 3 }, 'name', 'must be a non-empty string'],
    [{ kind: 'sliding' }, 'kind', ratioKinds],
    [{ kind: 'consecutive', failureThreshold: 0 }, 'failureThreshold', 'must be an integer >= 1'],
    [{ kind: 'consecutive', failureThreshold: 1.5 }, 'failureThreshold', 'must be an integer >= 1'],
    [{ failureRatio: 0 }, 'failureRatio', 'must be a number > 0 and <= 1'],
    [{ failureRatio: 1.0001 }, 'failureRatio', 'must be a number > 0 and <= 1'],
    [{ failureRatio: Number.NaN }, 'failureRatio', 'must be a number > 0 and <= 1'],
    [{ minimumThroughput: 0 }, 'minimumThroughput', 'must be an integer >= 1'],
    [{ minimumThroughput: 2.5 }, 'minimumThroughput', 'must be an integer >= 1'],
    [{ samplingDuration: 9 }, 'samplingDuration', `must be a number >= 10 and <= ${MAX_TIMER_DELAY}`],
    [{ samplingDuration: MAX_TIMER_DELAY + 1 }, 'samplingDuration', `must be a number >= 10 and <= ${MAX_TIMER_DELAY}`],
    [{ kind: 'count-window', windowSize: 0 }, 'windowSize', 'must be an integer >= 1 and <= 100000'],
    [{ kind: 'count-window', windowSize: 100_001 }, 'windowSize', 'must be an integer >= 1 and <= 100000'],
    [{ kind: 'slow-call', slowCallDuration: 0 }, 'slowCallDuration', `must be a number >= 1 and <= ${MAX_TIMER_DELAY}`],
    [{ breakDuration: 0 }, 'breakDuration', `must be a number >= 1 and <= ${MAX_TIMER_DELAY}`],
    [{ breakDuration: Infinity }, 'breakDuration', `must be a number >= 1 and <= ${MAX_TIMER_DELAY}`],
    [{ breakDurationGenerator: 5 }, 'breakDurationGenerator', 'must be a function'],
    [{ permittedCallsInHalfOpen: 0 }, 'permittedCallsInHalfOpen', 'must be an integer >= 1 and <= 10000'],
    [{ permittedCallsInHalfOpen: 10_001 }, 'permittedCallsInHalfOpen', 'must be an integer >= 1 and <= 10000'],
    [{ successThresholdInHalfOpen: 0 }, 'successThresholdInHalfOpen', 'must be an integer >= 1 and <= 10000'],
    [{ waitForHalfOpenVerdict: 'yes' }, 'waitForHalfOpenVerdict', 'must be a boolean'],
    [{ maxHalfOpenWait: 0 }, 'maxHalfOpenWait', `must be a number >= 1 and <= ${MAX_TIMER_DELAY}`],
    [{ shouldHandle: true }, 'shouldHandle', 'must be a function'],
    [{ onOpened: {} }, 'onOpened', 'must be a function'],
    [{ onClosed: 'x' }, 'onClosed', 'must be a function'],
    [{ onHalfOpened: 1 }, 'onHalfOpened', 'must be a function'],
    [{ onStateChange: null }, 'onStateChange', 'must be a function'],
    [{ circuitKey: '' }, 'circuitKey', 'must be a non-empty string'],
    [{ stateStore: {} }, 'stateStore', 'must be a CircuitBreakerStateStore'],
    [{ stateStore: null }, 'stateStore', 'must be a CircuitBreakerStateStore'],
    [{ manualControl: { isolate: 1 } }, 'manualControl', 'must be a CircuitBreakerManualControl'],
    [{ stateProvider: 'p' }, 'stateProvider', 'must be a CircuitBreakerStateProvider'],
    [{ failureTreshold: 3 }, 'failureTreshold', 'is not a known option (did you mean "failureThreshold"?)'],
  ];

  it.each(invalid)('%j is rejected at %s', (options, path, rule) => {
    expect(problems(options, 'p')).toEqual([{ path, rule }]);
  });

  const valid: Record<string, unknown>[] = [
    { kind: 'consecutive', failureThreshold: 1 },
    { failureRatio: 1 },
    { failureRatio: Number.MIN_VALUE },
    { minimumThroughput: 1 },
    { samplingDuration: 10 },
    { samplingDuration: MAX_TIMER_DELAY },
    { kind: 'count-window', windowSize: 1, minimumThroughput: 1 },
    { kind: 'count-window', windowSize: 100_000 },
    { kind: 'slow-call', slowCallDuration: 1 },
    { breakDuration: 1 },
    { breakDuration: MAX_TIMER_DELAY },
    { permittedCallsInHalfOpen: 10_000 },
    { permittedCallsInHalfOpen: 3, successThresholdInHalfOpen: 3 },
    { maxHalfOpenWait: 1, waitForHalfOpenVerdict: false },
    { stateStore: new InMemoryCircuitBreakerStateStore() },
    { stateStore: new InMemoryCircuitBreakerStateStore(), circuitKey: 'k' },
    { manualControl: new CircuitBreakerManualControl(), stateProvider: new CircuitBreakerStateProvider() },
  ];

  it.each(valid)('%j builds', (options) => {
    expect(problems(options, 'p')).toEqual([]);
  });

  describe('options of another kind', () => {
    it.each([
      [
        'consecutive',
        'failureRatio',
        0.5,
        'applies only to kind "time-window" or "count-window" or "slow-call", not "consecutive"',
      ],
      [
        'consecutive',
        'minimumThroughput',
        5,
        'applies only to kind "time-window" or "count-window" or "slow-call", not "consecutive"',
      ],
      ['consecutive', 'samplingDuration', 1000, 'applies only to kind "time-window" or "slow-call", not "consecutive"'],
      ['time-window', 'failureThreshold', 3, 'applies only to kind "consecutive", not "time-window"'],
      ['time-window', 'windowSize', 10, 'applies only to kind "count-window", not "time-window"'],
      [
        'count-window',
        'samplingDuration',
        1000,
        'applies only to kind "time-window" or "slow-call", not "count-window"',
      ],
      ['count-window', 'slowCallDuration', 1000, 'applies only to kind "slow-call", not "count-window"'],
      ['slow-call', 'windowSize', 10, 'applies only to kind "count-window", not "slow-call"'],
    ])('%s with %s is rejected', (kind, option, value, rule) => {
      expect(problems({ kind, [option]: value }, 'p')).toEqual([{ path: option, rule }]);
    });

    it('the default kind is time-window', () => {
      expect(problems({ failureThreshold: 3 }, 'p')).toEqual([
        { path: 'failureThreshold', rule: 'applies only to kind "consecutive", not "time-window"' },
      ]);
    });

    it('a kind that is not a string reports the kind only, even one that reads as a known kind', () => {
      expect(problems({ kind: ['consecutive'], failureRatio: 0.5 }, 'p')).toEqual([{ path: 'kind', rule: ratioKinds }]);
      expect(problems({ kind: 'toString', failureThreshold: 3 }, 'p')).toEqual([{ path: 'kind', rule: ratioKinds }]);
    });

    it('an unknown kind reports the kind only, not every kind-specific option', () => {
      expect(problems({ kind: 'sliding', failureThreshold: 3, windowSize: 10 }, 'p')).toEqual([
        { path: 'kind', rule: ratioKinds },
      ]);
    });
  });

  describe('rules across options', () => {
    it('successThresholdInHalfOpen above permittedCallsInHalfOpen is allowed (probes are admitted in turns)', () => {
      expect(problems({ successThresholdInHalfOpen: 3 }, 'p')).toEqual([]);
      expect(problems({ permittedCallsInHalfOpen: 4, successThresholdInHalfOpen: 5 }, 'p')).toEqual([]);
      expect(problems({ successThresholdInHalfOpen: 10_001 }, 'p')).toEqual([
        { path: 'successThresholdInHalfOpen', rule: 'must be an integer >= 1 and <= 10000' },
      ]);
    });

    it('a count window smaller than minimumThroughput can never open (default window 100)', () => {
      expect(problems({ kind: 'count-window', minimumThroughput: 101 }, 'p')).toEqual([
        { path: 'minimumThroughput', rule: 'must be <= windowSize (100), or the circuit can never open' },
      ]);
      expect(problems({ kind: 'count-window', minimumThroughput: 100 }, 'p')).toEqual([]);
      expect(problems({ kind: 'count-window', windowSize: 5, minimumThroughput: 6 }, 'p')).toEqual([
        { path: 'minimumThroughput', rule: 'must be <= windowSize (5), or the circuit can never open' },
      ]);
      // A minimumThroughput that is not a number is reported as such, not also compared with the window.
      expect(problems({ kind: 'count-window', minimumThroughput: '200' }, 'p')).toEqual([
        { path: 'minimumThroughput', rule: 'must be an integer >= 1' },
      ]);
      // Only the count window has that limit.
      expect(problems({ kind: 'time-window', minimumThroughput: 1_000 }, 'p')).toEqual([]);
    });

    it('a shared store needs a circuit key unless the pipeline has a name', () => {
      const stateStore = new InMemoryCircuitBreakerStateStore();
      expect(problems({ stateStore })).toEqual([
        { path: 'circuitKey', rule: 'is required with a shared stateStore when the pipeline has no name' },
      ]);
      expect(problems({ stateStore, circuitKey: 'k' })).toEqual([]);
      expect(problems({ stateStore }, 'named')).toEqual([]);
      expect(problems({})).toEqual([]);
    });

    it('lists every problem at once, each with its value', () => {
      try {
        new ResiliencePipelineBuilder().addCircuitBreaker({ breakDuration: -5, failureRatio: 2 }).build();
        throw new Error('built');
      } catch (error) {
        const issues = (error as ResilienceValidationError).issues;
        expect(issues.map((i) => [i.path, i.value])).toEqual([
          [`${PREFIX}failureRatio`, 2],
          [`${PREFIX}breakDuration`, -5],
        ]);
        expect((error as Error).message).toMatch(/\(2 problems\)/);
      }
    });
  });
});
