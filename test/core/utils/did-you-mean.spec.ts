import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { ResiliencePipelineRegistry, ResilienceValidationError } from '../../../src/core.entry.js';
import { closestName } from '../../../src/core/utils/did-you-mean.util.js';

describe('closestName (the "did you mean" of start-up errors)', () => {
  it.each<[string, string, string[], string | undefined]>([
    ['one substitution in a short name', 'retyr', ['retry', 'timeout'], 'retry'],
    ['an adjacent swap counts as one edit', 'tiemout', ['timeout', 'retry'], 'timeout'],
    ['a missing letter', 'fallbak', ['fallback'], 'fallback'],
    ['an extra letter', 'hedgging', ['hedging'], 'hedging'],
    ['case is ignored', 'RETRY', ['retry'], 'retry'],
    ['the exact name is no suggestion', 'retry', ['retry'], undefined],
    ['the exact name is skipped, a near one is offered', 'retry', ['retry', 'retro'], 'retro'],
    ['too far: two edits in a five-letter name', 'rexxy', ['retry'], undefined],
    ['a short name allows one edit', 'ab', ['ac'], 'ac'],
    ['a short name allows no more than one', 'ab', ['cd'], undefined],
    ['half a swap is no swap', 'ab', ['ca'], undefined],
    ['a swap at the end', 'abdc', ['abcd'], 'abcd'],
    ['nine letters allow three edits', 'abcdefghi', ['abcxyzghi'], 'abcxyzghi'],
    ['nine letters allow no more than three', 'abcdefghi', ['abwxyzghi'], undefined],
    ['twelve letters still allow only three', 'abcdefghijkl', ['abcdwxyzijkl'], undefined],
    ['lengths too far apart', 'a', ['abc'], undefined],
    ['the closest of several wins', 'circuitbraker', ['circuitbreaker', 'circuitbreakers'], 'circuitbreaker'],
    ['ties go to the first candidate', 'cat', ['bat', 'rat'], 'bat'],
    ['no candidates', 'x', [], undefined],
  ])('%s', (_, name, candidates, expected) => {
    expect(closestName(name, candidates)).toBe(expected);
  });

  it('accepts any iterable of candidates', () => {
    expect(closestName('retyr', new Set(['retry']))).toBe('retry');
  });

  it('never suggests a name more edits away than its limit (checked against a plain edit distance)', () => {
    const plain = (a: string, b: string): number => {
      const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
      for (let j = 1; j <= b.length; j++) d[0][j] = j;
      for (let i = 1; i <= a.length; i++)
        for (let j = 1; j <= b.length; j++) {
          d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
          if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
            d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
        }
      return d[a.length][b.length];
    };
    const word = fc.string({ unit: fc.constantFrom('a', 'b', 'c', 'd'), minLength: 1, maxLength: 9 });
    fc.assert(
      fc.property(word, fc.array(word, { maxLength: 5 }), (name, candidates) => {
        const limit = Math.min(3, Math.max(1, Math.floor(name.length / 3)));
        const eligible = candidates.filter((c) => c !== name);
        const best = Math.min(...eligible.map((c) => plain(name, c)));
        const found = closestName(name, candidates);
        if (best > limit) expect(found).toBeUndefined();
        else {
          expect(found).toBeDefined();
          expect(plain(name, found!)).toBe(best);
          expect(found).toBe(eligible.find((c) => plain(name, c) === best));
        }
      }),
      { numRuns: 300 },
    );
  });

  it('start-up errors list the known names, led by the hint when one is close', () => {
    const rule = (name: string) => {
      try {
        new ResiliencePipelineRegistry({ pipelines: { a: { retry: { shouldHandle: name } } } });
      } catch (error) {
        return (error as ResilienceValidationError).issues[0].rule;
      }
      return undefined;
    };
    const known =
      'known: all-errors, http-failure, http-retryable, http-transient, overload, timeout, transient-network';
    expect(rule('timeuot')).toBe(`is not a registered predicate (did you mean "timeout"?; ${known})`);
    expect(rule('nothing-like-it')).toBe(`is not a registered predicate (${known})`);
  });
});
