import { describe, expect, it } from '@jest/globals';
import { ResiliencePipelineBuilder, ResilienceValidationError } from '../../../src/index.js';

const PREFIX = 'strategies[0] (fallback).';

function problems(options: Record<string, unknown>): { path: string; rule: string }[] {
  try {
    new ResiliencePipelineBuilder().addFallback(options).build();
    return [];
  } catch (error) {
    expect(error).toBeInstanceOf(ResilienceValidationError);
    return (error as ResilienceValidationError).issues.map((i) => ({
      path: i.path.slice(PREFIX.length),
      rule: i.rule,
    }));
  }
}

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
