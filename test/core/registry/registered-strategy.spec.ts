import { afterEach, describe, expect, it } from '@jest/globals';
import {
  registerStrategy,
  ResiliencePipelineRegistry,
  section,
  strategyCatalog,
  unregisterStrategy,
  type StrategyDefinition,
} from '../../../src/core.entry.js';

/** A strategy written the former way: a plain definition, no options schema and no `validate`. */
const tagged: StrategyDefinition<{ tag?: string }, { tagged: { tag?: string } }> = {
  type: 'tagged',
  events: [],
  create: (options) => ({
    execute: (next, context) => next(context).then((value) => `${String(value)}:${options.tag ?? 'none'}`),
  }),
  sections: { tagged: section<{ tag?: string }>() },
};

afterEach(() => unregisterStrategy('tagged'));

describe('a strategy registered outside the package', () => {
  it('is configured from its section even without a validate of its own, at the place it was given', async () => {
    registerStrategy('tagged', tagged, { before: 'retry' });
    const names = strategyCatalog().map((line) => line.name);
    expect(names.indexOf('tagged')).toBe(names.indexOf('retry') - 1);
    const registry = new ResiliencePipelineRegistry({
      pipelines: { p: { tagged: { tag: 'a' } } as never },
    });
    await expect(registry.getPipeline('p').execute(() => 'value')).resolves.toBe('value:a');
    await registry.dispose();
  });
});
