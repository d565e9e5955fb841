import { afterEach, describe, expect, it } from '@jest/globals';
import {
  catalogLine,
  registerStrategy,
  retryStrategy,
  section,
  STRATEGY_CATALOG,
  strategyCatalog,
  unregisterStrategy,
  type StrategyDefinition,
} from '../../../src/core.entry.js';

type Tag = { tag?: string };
/** The built-in lines (their order is asserted in test/core/pipeline/built-in.strategies.spec.ts). */
const BUILT_IN = STRATEGY_CATALOG.map((line) => line.name);

/** A strategy of one's own with one section (`name`), passing values through. */
function strategy<N extends string>(name: N, sectionType?: string): StrategyDefinition<Tag, Record<N, Tag>> {
  return {
    type: `${name}-type`,
    events: [],
    create: () => ({ execute: (next, context) => next(context) }),
    sections: { [name]: section<Tag>({ type: sectionType, decorator: `${name}Decorator` }) } as never,
  };
}

const names = () => strategyCatalog().map((line) => line.name);

afterEach(() => {
  for (const name of ['first', 'second', 'third']) unregisterStrategy(name);
});

describe('the strategy catalog', () => {
  it('starts with the built-in lines: the pipeline slot without a strategy, each section with its own', () => {
    expect(names()).toEqual(BUILT_IN);
    const slot = STRATEGY_CATALOG.find((line) => line.name === 'pipeline')!;
    expect(slot).toMatchObject({ type: undefined, registration: undefined, decorator: 'UseResiliencePipeline' });
    const retry = STRATEGY_CATALOG.find((line) => line.name === 'retry')!;
    expect(retry).toMatchObject({ type: 'retry', decorator: 'Retry', registration: retryStrategy });
    expect(retry.definition).toBe(retryStrategy.sections!.retry);
  });

  it('puts a registered strategy innermost by default, or right before or after the line named', () => {
    const first = registerStrategy('first', strategy('first'));
    expect(names()).toEqual([...BUILT_IN, 'first']);
    expect(first).toMatchObject({ name: 'first', type: 'first-type', decorator: 'firstDecorator' });
    registerStrategy('second', strategy('second', 'own-type'), { before: 'retry' });
    registerStrategy('third', strategy('third'), { after: 'retry' });
    const retry = names().indexOf('retry');
    expect(names().slice(retry - 1, retry + 2)).toEqual(['second', 'retry', 'third']);
    expect(strategyCatalog().find((line) => line.name === 'second')?.type).toBe('own-type');
    expect(names()).toHaveLength(BUILT_IN.length + 3);
  });

  it('places relative to a registered line too, before the outermost and after the innermost', () => {
    registerStrategy('first', strategy('first'), { before: 'fallback' });
    registerStrategy('second', strategy('second'), { after: 'chaosFault' });
    registerStrategy('third', strategy('third'), { after: 'first' });
    expect(names()).toEqual(['first', 'third', ...BUILT_IN, 'second']);
  });

  it('refuses a name already in the catalog, built in or registered, and leaves the catalog as it was', () => {
    expect(() => registerStrategy('retry', strategy('retry'))).toThrow(
      'The strategy catalog has a "retry" section already.',
    );
    registerStrategy('first', strategy('first'));
    expect(() => registerStrategy('first', strategy('first'))).toThrow(
      'The strategy catalog has a "first" section already.',
    );
    expect(names()).toEqual([...BUILT_IN, 'first']);
  });

  it('refuses a place by a line it does not have, and adds nothing', () => {
    expect(() => registerStrategy('first', strategy('first'), { before: 'retries' })).toThrow(
      'The strategy catalog has no "retries" line to place a strategy by.',
    );
    expect(() => registerStrategy('first', strategy('first'), { after: 'nope' })).toThrow(
      'The strategy catalog has no "nope" line to place a strategy by.',
    );
    expect(names()).toEqual(BUILT_IN);
  });

  it('unregisters only what was registered: the built-in lines stay', () => {
    registerStrategy('first', strategy('first'));
    registerStrategy('second', strategy('second'));
    unregisterStrategy('first');
    expect(names()).toEqual([...BUILT_IN, 'second']);
    unregisterStrategy('retry');
    unregisterStrategy('pipeline');
    expect(names()).toEqual([...BUILT_IN, 'second']);
  });

  it('refuses a catalog line for a section its descriptor does not have', () => {
    expect(() => catalogLine('first' as never, strategy('second'))).toThrow(
      'The second-type strategy has no "first" section.',
    );
    expect(() => registerStrategy('first' as never, strategy('second'))).toThrow(
      'The second-type strategy has no "first" section.',
    );
    expect(names()).toEqual(BUILT_IN);
  });
});
