import { expect } from '@jest/globals';
import { ResiliencePipelineBuilder, ResilienceValidationError } from '../../src/core.entry.js';

/**
 * The problems `build()` reports for a pipeline of one strategy, each path relative to the strategy
 * (`strategies[0] (retry).delay` → `delay`); none when it builds.
 */
export function strategyProblems(
  type: string,
  add: (builder: ResiliencePipelineBuilder<unknown>) => ResiliencePipelineBuilder<unknown>,
): { path: string; rule: string }[] {
  const prefix = `strategies[0] (${type}).`;
  try {
    add(new ResiliencePipelineBuilder()).build();
    return [];
  } catch (error) {
    expect(error).toBeInstanceOf(ResilienceValidationError);
    return (error as ResilienceValidationError).issues.map((i) => ({
      path: i.path.slice(prefix.length),
      rule: i.rule,
    }));
  }
}
