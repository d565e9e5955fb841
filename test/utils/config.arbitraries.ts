import { expect } from '@jest/globals';
import fc from 'fast-check';
import { MAX_TIMER_DELAY, ResilienceValidationError } from '../../src/core.entry.js';

/**
 * Arbitrary JSON-like pipeline configurations — valid, near-valid and hostile — for the registry and the
 * Nest module (`test/core/registry/pipeline-config.fuzz.spec.ts`, `test/nest/resilience-module.fuzz.e2e-spec.ts`): whatever the input, construction either
 * succeeds or throws exactly one `ResilienceValidationError` whose every problem has a path.
 */

export const SECTIONS = [
  'fallback',
  'totalTimeout',
  'rateLimiter',
  'concurrencyLimiter',
  'hedging',
  'retry',
  'circuitBreaker',
  'timeout',
  'chaosLatency',
  'chaosFault',
  'chaosOutcome',
  'chaosBehavior',
] as const;

export const HOSTILE_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf'];

const OPTION_KEYS = [
  'name',
  'kind',
  'timeout',
  'mode',
  'delay',
  'maxDelay',
  'maxRetryAttempts',
  'backoffType',
  'useJitter',
  'shouldHandle',
  'failureThreshold',
  'failureRatio',
  'minimumThroughput',
  'samplingDuration',
  'windowSize',
  'slowCallDuration',
  'breakDuration',
  'permittedCallsInHalfOpen',
  'successThresholdInHalfOpen',
  'waitForHalfOpenVerdict',
  'maxHalfOpenWait',
  'circuitKey',
  'permitLimit',
  'queueLimit',
  'tokenLimit',
  'tokensPerPeriod',
  'replenishmentPeriod',
  'window',
  'segmentsPerWindow',
  'maxHedgedAttempts',
  'injectionRate',
  'enabled',
  'latency',
  'message',
  'fault',
  'value',
  'budget',
  'ratio',
  'type',
  'strategies',
];

const hostileNumber = fc.oneof(
  fc.constantFrom(
    0,
    -0,
    -1,
    1,
    0.5,
    NaN,
    Infinity,
    -Infinity,
    Number.MAX_VALUE,
    Number.MIN_VALUE,
    Number.MAX_SAFE_INTEGER,
    MAX_TIMER_DELAY,
    MAX_TIMER_DELAY + 1,
    1e308,
    -1e308,
  ),
  fc.integer({ min: -10, max: 100_000 }),
  fc.double(),
);

const scalar = fc.oneof(
  hostileNumber,
  fc.constantFrom(
    '',
    '2s',
    '100ms',
    '1.5',
    '-3',
    'NaN',
    'transient-network',
    'all-errors',
    'consecutive',
    'aggressive',
    '__proto__',
    'constructor',
    'toString',
    'token-bucket',
  ),
  fc.string({ maxLength: 8 }),
  fc.boolean(),
  fc.constant(null),
);

const key = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...OPTION_KEYS) },
  { weight: 2, arbitrary: fc.constantFrom(...HOSTILE_KEYS) },
  { weight: 1, arbitrary: fc.string({ maxLength: 6 }) },
);

/** Objects built with Object.fromEntries, so `__proto__` is an own key as JSON.parse would make it. */
const jsonValue: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    scalar,
    tie('object'),
    fc.array(tie('value'), { maxLength: 3 }),
  ),
  object: fc.array(fc.tuple(key, tie('value')), { maxLength: 5 }).map((entries) => Object.fromEntries(entries)),
})).value;

const section = fc.oneof(
  hostileNumber,
  jsonValue,
  fc
    .array(fc.tuple(fc.constantFrom(...OPTION_KEYS), fc.oneof(scalar, jsonValue)), { maxLength: 6 })
    .map((entries) => Object.fromEntries(entries)),
);

const strategiesList = fc.array(
  fc
    .tuple(fc.oneof(fc.constantFrom(...SECTIONS), fc.string({ maxLength: 6 }), scalar), section)
    .map(([type, options]) =>
      typeof options === 'object' && options !== null && !Array.isArray(options)
        ? { ...options, type }
        : { type, options },
    ),
  { maxLength: 4 },
);

export const pipelineConfig: fc.Arbitrary<unknown> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc
      .array(fc.tuple(fc.oneof(fc.constantFrom(...SECTIONS), fc.constantFrom(...HOSTILE_KEYS)), section), {
        maxLength: 5,
      })
      .map((entries) => Object.fromEntries(entries)),
  },
  { weight: 1, arbitrary: strategiesList.map((strategies) => ({ strategies })) },
  { weight: 1, arbitrary: jsonValue },
);

export const pipelines: fc.Arbitrary<Record<string, unknown>> = fc
  .array(fc.tuple(fc.oneof(fc.string({ maxLength: 6 }), fc.constantFrom(...HOSTILE_KEYS)), pipelineConfig), {
    maxLength: 4,
  })
  .map((entries) => Object.fromEntries(entries));

/** Everything on Object.prototype and Array.prototype, to compare before and after. */
export function prototypeFingerprint(): string[] {
  const describe = (target: object, label: string) =>
    Reflect.ownKeys(target).map((k) => {
      const d = Object.getOwnPropertyDescriptor(target, k)!;
      return `${label}.${String(k)}:${typeof d.value}:${d.value === undefined ? 'accessor' : ''}`;
    });
  return [
    ...describe(Object.prototype, 'Object'),
    ...describe(Array.prototype, 'Array'),
    ...describe(Function.prototype, 'Function'),
  ];
}

/** Asserts the outcome of a construction: it started, or it threw one validation error with paths. */
export function expectStartedOrOneValidationError(error: unknown): void {
  if (error === undefined) return;
  expect(error).toBeInstanceOf(ResilienceValidationError);
  const issues = (error as ResilienceValidationError).issues;
  expect(issues.length).toBeGreaterThan(0);
  for (const issue of issues) {
    expect(typeof issue.path).toBe('string');
    expect(issue.path.length).toBeGreaterThan(0);
    expect(typeof issue.rule).toBe('string');
  }
  // The message renders every issue, whatever the values (cycles, deep nesting, huge numbers).
  expect((error as Error).message).toContain(issues[issues.length - 1].path);
}
