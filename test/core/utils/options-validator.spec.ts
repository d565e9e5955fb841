import { describe, expect, it } from '@jest/globals';
import { MAX_TIMER_DELAY, OptionsValidator, ResilienceValidationError } from '../../../src/core.entry.js';

/** The rules `check` reports for `value` at path `x`, on a fresh validator. */
function rules(check: (v: OptionsValidator) => unknown): string[] {
  const v = new OptionsValidator('');
  check(v);
  return v.problems.map((p) => `${p.path}: ${p.rule}`);
}

describe('OptionsValidator', () => {
  it('prefixes paths with its own, without a dot before an index; no prefix leaves the path alone', () => {
    const root = new OptionsValidator('pipeline "a"');
    root.add('x', 1, 'r').add('[0]', 2, 'r');
    root.child('retry').add('delay', 3, 'r').add('[1]', 4, 'r');
    expect(root.problems.map((p) => p.path)).toEqual([
      'pipeline "a".x',
      'pipeline "a"[0]',
      'pipeline "a".retry.delay',
      'pipeline "a".retry[1]',
    ]);
    const bare = new OptionsValidator('');
    bare.add('bare', 5, 'r').child('[2]').add('y', 6, 'r');
    expect(bare.problems.map((p) => p.path)).toEqual(['bare', '[2].y']);
  });

  it('children share the problems of their root; isValid and addIssues see them all', () => {
    const root = new OptionsValidator('root');
    expect(root.isValid).toBe(true);
    root.child('a').add('b', 1, 'r');
    expect(root.isValid).toBe(false);
    root.addIssues([{ path: 'elsewhere', value: 2, rule: 'q' }]);
    expect(root.problems).toEqual([
      { path: 'root.a.b', value: 1, rule: 'r' },
      { path: 'elsewhere', value: 2, rule: 'q' },
    ]);
  });

  it('throwIfInvalid throws one error with every problem and the title, and nothing when valid', () => {
    const v = new OptionsValidator('');
    expect(() => v.throwIfInvalid('Title')).not.toThrow();
    v.add('a', 1, 'r1').add('b', 2, 'r2');
    try {
      v.throwIfInvalid('Title');
      throw new Error('did not throw');
    } catch (error) {
      expect(error).toBeInstanceOf(ResilienceValidationError);
      expect((error as ResilienceValidationError).issues).toHaveLength(2);
      expect((error as Error).message).toMatch(/^Title \(2 problems\)/);
    }
  });

  it('required: undefined and null are missing, anything else is given', () => {
    const v = new OptionsValidator('');
    expect(v.required('a', undefined)).toBe(false);
    expect(v.required('b', null)).toBe(false);
    expect(v.required('c', 0)).toBe(true);
    expect(v.required('d', '')).toBe(true);
    expect(v.problems).toEqual([
      { path: 'a', value: undefined, rule: 'is required' },
      { path: 'b', value: null, rule: 'is required' },
    ]);
  });

  it.each<[string, unknown, Parameters<OptionsValidator['number']>[2], string | undefined]>([
    ['undefined is not checked', undefined, { min: 1 }, undefined],
    ['a string is not a number', '1', {}, 'must be a number'],
    ['NaN is not a number', NaN, {}, 'must be a number'],
    ['Infinity needs allowInfinity', Infinity, {}, 'must be a number'],
    ['-Infinity is never allowed', -Infinity, { allowInfinity: true }, 'must be a number'],
    ['Infinity with allowInfinity', Infinity, { allowInfinity: true }, undefined],
    ['Infinity counts as an integer', Infinity, { allowInfinity: true, integer: true }, undefined],
    ['a fraction is not an integer', 1.5, { integer: true }, 'must be an integer'],
    ['a whole number is an integer', 2, { integer: true }, undefined],
    ['the minimum itself', 0, { min: 0 }, undefined],
    ['below the minimum', -1, { min: 0 }, 'must be a number >= 0'],
    ['the minimum itself when exclusive', 0, { min: 0, exclusiveMin: true }, 'must be a number > 0'],
    ['above an exclusive minimum', 0.1, { min: 0, exclusiveMin: true }, undefined],
    ['the maximum itself', 5, { max: 5 }, undefined],
    ['above the maximum', 6, { max: 5 }, 'must be a number <= 5'],
    ['both bounds', 7, { min: 1, max: 5, integer: true }, 'must be an integer >= 1 and <= 5'],
  ])('number: %s', (_, value, rule, expected) => {
    expect(rules((v) => v.number('x', value, rule))).toEqual(expected ? [`x: ${expected}`] : []);
  });

  it('number without a rule checks only that it is a finite number', () => {
    expect(rules((v) => v.number('x', -1e300))).toEqual([]);
    expect(rules((v) => v.number('x', 'no'))).toEqual(['x: must be a number']);
  });

  it.each<[string, unknown, Parameters<OptionsValidator['duration']>[2], string | undefined]>([
    [
      'a string (configuration parses them, code does not)',
      '2s',
      {},
      'must be a duration: milliseconds, or in configuration "200ms", "2s", "1m", "00:00:30"',
    ],
    ['zero by default', 0, {}, undefined],
    ['a negative number', -1, {}, `must be a number >= 0 and <= ${MAX_TIMER_DELAY}`],
    ['the largest timer delay', MAX_TIMER_DELAY, {}, undefined],
    ['past the largest timer delay', MAX_TIMER_DELAY + 1, {}, `must be a number >= 0 and <= ${MAX_TIMER_DELAY}`],
    ['zero with an exclusive minimum', 0, { exclusiveMin: true }, `must be a number > 0 and <= ${MAX_TIMER_DELAY}`],
    ['below its own minimum', 5, { min: 10 }, `must be a number >= 10 and <= ${MAX_TIMER_DELAY}`],
    ['above its own maximum', 11, { max: 10 }, 'must be a number >= 0 and <= 10'],
    ['undefined', undefined, {}, undefined],
  ])('duration: %s', (_, value, rule, expected) => {
    expect(rules((v) => v.duration('x', value, rule))).toEqual(expected ? [`x: ${expected}`] : []);
  });

  it('boolean, string, func: undefined passes, the wrong type is reported', () => {
    expect(
      rules((v) =>
        v
          .boolean('b1', undefined)
          .boolean('b2', true)
          .boolean('b3', 'true')
          .string('s1', undefined)
          .string('s2', 'x')
          .string('s3', '')
          .string('s4', 1)
          .func('f1', undefined)
          .func('f2', () => 0)
          .func('f3', 'fn'),
      ),
    ).toEqual([
      'b3: must be a boolean',
      's3: must be a non-empty string',
      's4: must be a non-empty string',
      'f3: must be a function',
    ]);
  });

  it('oneOf lists the allowed values as JSON', () => {
    expect(
      rules((v) => v.oneOf('m', 'a', ['a', 'b']).oneOf('n', undefined, ['a']).oneOf('o', 'c', ['a', 'b'])),
    ).toEqual(['o: must be one of "a", "b"']);
  });

  it('knownKeys flags unknown keys that have a value, with a hint for a near miss', () => {
    const v = new OptionsValidator('opts');
    v.knownKeys({ delay: 1, dealy: 2, unused: undefined, zzzzzz: 3 }, ['delay', 'maxDelay']);
    expect(v.problems).toEqual([
      { path: 'opts.dealy', value: 2, rule: 'is not a known option (did you mean "delay"?)' },
      { path: 'opts.zzzzzz', value: 3, rule: 'is not a known option' },
    ]);
  });
});
