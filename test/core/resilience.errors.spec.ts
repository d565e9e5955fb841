import { describe, expect, it } from '@jest/globals';
import {
  BrokenCircuitError,
  getRetryAfter,
  isBrokenCircuitError,
  isCancellation,
  isCancellationError,
  isIsolatedCircuitError,
  isRateLimiterRejectedError,
  isResilienceError,
  isResilienceValidationError,
  isTimeoutRejectedError,
  isUnknownPipelineError,
  IsolatedCircuitError,
  RateLimiterRejectedError,
  ResilienceError,
  ResiliencePipelineBuilder,
  ResilienceValidationError,
  TimeoutRejectedError,
  UnknownPipelineError,
} from '../../src/core.entry.js';
import { FakeTimeProvider } from '../../src/testing/index.js';

const issue = (value: unknown) => ({ path: 'p', value, rule: 'is wrong' });

function circular(): object {
  const value: { self?: unknown } = {};
  value.self = value;
  return value;
}

describe('resilience errors', () => {
  describe('ResilienceValidationError', () => {
    it('counts its problems in the message, singular for one', () => {
      expect(new ResilienceValidationError([issue(1)]).message).toBe(
        'Invalid resilience options (1 problem):\n  - p: 1 is wrong',
      );
      expect(new ResilienceValidationError([issue(1), { path: 'q', value: true, rule: 'is bad' }], 'Bad').message).toBe(
        'Bad (2 problems):\n  - p: 1 is wrong\n  - q: true is bad',
      );
    });

    it.each<[string, unknown, string]>([
      ['a named function', function check() {}, '[function check]'],
      ['an anonymous function', Object.defineProperty(() => 0, 'name', { value: '' }), '[function anonymous]'],
      ['a string, quoted', 'a "b"', '"a \\"b\\""'],
      ['a bigint', 10n, '10n'],
      ['undefined', undefined, 'undefined'],
      ['a number', -1.5, '-1.5'],
      ['NaN', NaN, 'NaN'],
      ['a boolean', false, 'false'],
      ['null', null, 'null'],
      ['an object, as JSON', { a: [1, 2] }, '{"a":[1,2]}'],
      ['an object of exactly 80 characters of JSON, whole', { k: 'x'.repeat(72) }, `{"k":"${'x'.repeat(72)}"}`],
      ['a longer object, cut to 80 characters', { k: 'x'.repeat(73) }, `{"k":"${'x'.repeat(71)}...`],
      ['an object JSON cannot write', circular(), '[object Object]'],
      ['a long string, whole', 'y'.repeat(100), `"${'y'.repeat(100)}"`],
      ['-Infinity', -Infinity, '-Infinity'],
      ['true', true, 'true'],
    ])('describes %s in the message', (_, value, shown) => {
      expect(new ResilienceValidationError([issue(value)]).message).toBe(
        `Invalid resilience options (1 problem):\n  - p: ${shown} is wrong`,
      );
    });

    it('keeps the issues as given', () => {
      const issues = [issue(1)];
      expect(new ResilienceValidationError(issues).issues).toBe(issues);
    });
  });

  it('UnknownPipelineError lists the known names, or says there are none', () => {
    const error = new UnknownPipelineError('ordrs', ['orders', 'users']);
    expect(error.message).toBe('No resilience pipeline is named "ordrs". Known pipelines: "orders", "users".');
    expect(error.pipelineName).toBe('ordrs');
    expect(error.knownNames).toEqual(['orders', 'users']);
    expect(new UnknownPipelineError('x', []).message).toBe(
      'No resilience pipeline is named "x". Known pipelines: (none).',
    );
  });

  it('gives every error its default message, its name and its fields', () => {
    const broken = new BrokenCircuitError(undefined, 250, { cause: 'down' });
    expect(broken).toMatchObject({
      message: 'The circuit is now open and is not allowing calls.',
      name: 'BrokenCircuitError',
      retryAfter: 250,
      cause: 'down',
    });
    expect(new IsolatedCircuitError()).toMatchObject({
      message: 'The circuit is manually held open and is not allowing calls.',
      name: 'IsolatedCircuitError',
      retryAfter: undefined,
    });
    expect(new RateLimiterRejectedError(undefined, 40)).toMatchObject({
      message: 'The operation could not be executed because it was rejected by the rate limiter.',
      name: 'RateLimiterRejectedError',
      retryAfter: 40,
    });
    expect(new TimeoutRejectedError(300, { cause: 'slow' })).toMatchObject({
      message: 'The operation did not complete within the 300 ms timeout.',
      name: 'TimeoutRejectedError',
      timeout: 300,
      cause: 'slow',
    });
    expect(new TimeoutRejectedError(300, { message: 'total budget spent' }).message).toBe('total budget spent');
    expect(new ResilienceError('plain')).toMatchObject({ message: 'plain', name: 'ResilienceError' });
    expect(new UnknownPipelineError('a', []).name).toBe('UnknownPipelineError');
    expect(new ResilienceValidationError([]).name).toBe('ResilienceValidationError');
  });

  it('each guard recognises its own kind only; isBrokenCircuitError covers isolation too', () => {
    const errors = {
      broken: new BrokenCircuitError(),
      isolated: new IsolatedCircuitError(),
      timeout: new TimeoutRejectedError(1),
      rate: new RateLimiterRejectedError(),
      validation: new ResilienceValidationError([]),
      unknown: new UnknownPipelineError('a', []),
      base: new ResilienceError('x'),
    };
    const guards = {
      broken: isBrokenCircuitError,
      isolated: isIsolatedCircuitError,
      timeout: isTimeoutRejectedError,
      rate: isRateLimiterRejectedError,
      validation: isResilienceValidationError,
      unknown: isUnknownPipelineError,
    };
    for (const [guardName, guard] of Object.entries(guards)) {
      for (const [errorName, error] of Object.entries(errors)) {
        const expected = guardName === errorName || (guardName === 'broken' && errorName === 'isolated');
        expect([guardName, errorName, guard(error)]).toEqual([guardName, errorName, expected]);
      }
      for (const other of [undefined, null, 'BrokenCircuitError', 1, new Error('x')]) expect(guard(other)).toBe(false);
    }
    for (const error of Object.values(errors)) expect(isResilienceError(error)).toBe(true);
    for (const other of [undefined, null, 'x', new Error('x'), {}]) expect(isResilienceError(other)).toBe(false);
  });

  it('guards also recognise an error made by another copy of the package (by brand, not class)', () => {
    const foreign = Object.create({ [Symbol.for('nest-resilience.error')]: 'TimeoutRejectedError' }) as object;
    expect(isTimeoutRejectedError(foreign)).toBe(true);
    expect(isResilienceError(foreign)).toBe(true);
    expect(isBrokenCircuitError(foreign)).toBe(false);
  });

  it('an error without a captured stack shows its name and message as its stack; the stack can be replaced', async () => {
    const time = new FakeTimeProvider();
    const pipeline = new ResiliencePipelineBuilder({ timeProvider: time })
      .addCircuitBreaker({ failureRatio: 0.5, minimumThroughput: 2, breakDuration: 1_000 })
      .build();
    for (let i = 0; i < 2; i++) await pipeline.execute(() => Promise.reject(new Error('down'))).catch(() => undefined);
    const rejection = (await pipeline.execute(() => Promise.resolve(1)).catch((e: unknown) => e)) as Error;
    expect(rejection).toBeInstanceOf(BrokenCircuitError);
    expect(rejection.stack).toBe(`BrokenCircuitError: ${rejection.message}`);
    rejection.stack = 'replaced';
    expect(rejection.stack).toBe('replaced');
    rejection.stack = 'again';
    expect(rejection.stack).toBe('again');
    // The replacement is the instance's own: removing it shows the name and message again.
    expect(delete (rejection as { stack?: string }).stack).toBe(true);
    expect(rejection.stack).toBe(`BrokenCircuitError: ${rejection.message}`);
    // A constructed error keeps the stack trace V8 captured.
    expect(new BrokenCircuitError().stack).toContain('resilience.errors.spec');
  });

  it.each<[string, unknown, boolean]>([
    ['a DOM AbortError is one', new DOMException('stop', 'AbortError'), true],
    ["Node's ABORT_ERR is one", Object.assign(new Error('x'), { code: 'ABORT_ERR' }), true],
    ["axios' ERR_CANCELED is one", Object.assign(new Error('x'), { code: 'ERR_CANCELED' }), true],
    ['a TimeoutError is not', new DOMException('late', 'TimeoutError'), false],
    ['another code is not', Object.assign(new Error('x'), { code: 'ECONNRESET' }), false],
    ['the string "AbortError" is not', 'AbortError', false],
    ['null is not', null, false],
    ['undefined is not', undefined, false],
  ])('isCancellation without a context: %s a cancellation', (_, error, expected) => {
    expect(isCancellation(error)).toBe(expected);
    expect(isCancellationError(error)).toBe(expected); // the deprecated name of the same check
  });

  it.each<[string, unknown, number | undefined]>([
    ['a number', { retryAfter: 1_500 }, 1_500],
    ['zero', { retryAfter: 0 }, 0],
    ['a negative number', { retryAfter: -1 }, undefined],
    ['Infinity', { retryAfter: Infinity }, undefined],
    ['NaN', { retryAfter: NaN }, undefined],
    ['a string', { retryAfter: '10' }, undefined],
    ['no property', {}, undefined],
    ['null', null, undefined],
    ['a number as the error', 5, undefined],
    ['a function carrying one (not an error)', Object.assign(() => 0, { retryAfter: 5 }), undefined],
  ])('getRetryAfter: %s', (_, error, expected) => {
    expect(getRetryAfter(error)).toBe(expected);
  });
});
