import { describe, expect, it } from '@jest/globals';
import { strategyProblems } from '../../utils/validation-problems.js';

const problems = (options: Record<string, unknown>) => strategyProblems('fallback', (b) => b.addFallback(options));

describe('fallback options', () => {
  it.each<[Record<string, unknown>, string, string]>([
    [{ fallbackValue: 1, name: '' }, 'name', 'must be a non-empty string'],
    [{ fallbackAction: 'value' }, 'fallbackAction', 'must be a function'],
    [{ fallbackValue: 1, shouldHandle: true }, 'shouldHandle', 'must be a function'],
    [{ fallbackValue: 1, onFallback: {} }, 'onFallback', 'must be a function'],
    [{ fallbackValue: 1, value: 2 }, 'value', 'is not a known option'],
    [{}, 'fallbackAction', 'is required (or give fallbackValue)'],
    [{ fallbackValue: 1, fallbackAction: () => 2 }, 'fallbackValue', 'must not be given together with fallbackAction'],
  ])('%j is rejected at %s', (options, path, rule) => {
    expect(problems(options)).toEqual([{ path, rule }]);
  });

  it.each<Record<string, unknown>>([{ fallbackValue: null }, { fallbackAction: () => 1 }])('%j builds', (options) => {
    expect(problems(options)).toEqual([]);
  });

  it('a fallbackValue given as undefined counts as not given (spread-friendly options)', () => {
    expect(problems({ fallbackValue: undefined })).toEqual([
      { path: 'fallbackAction', rule: 'is required (or give fallbackValue)' },
    ]);
  });
});
