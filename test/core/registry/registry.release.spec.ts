import { afterEach, describe, expect, it } from '@jest/globals';
import {
  registerStrategy,
  ResiliencePipelineBuilder,
  ResiliencePipelineRegistry,
  section,
  unregisterStrategy,
  type StrategyDefinition,
} from '../../../src/core.entry.js';

type Counted = { failFor?: string };

/** A strategy of one's own that counts what it made and what was released; it cannot be made for `failFor`. */
function counting() {
  const made: string[] = [];
  const released: string[] = [];
  const definition: StrategyDefinition<Counted, { counted: Counted }> = {
    type: 'counted',
    events: [],
    create: (options, context) => {
      const instance = context.pipelineInstanceName ?? '(default)';
      if (options.failFor === instance) throw new Error(`cannot make one for ${instance}`);
      made.push(instance);
      return {
        execute: (next, ctx) => next(ctx),
        dispose: () => void released.push(instance),
      };
    },
    sections: { counted: section<Counted>() },
  };
  return { definition, made, released };
}

afterEach(() => unregisterStrategy('counted'));

describe('the registry releases every strategy it makes', () => {
  it('at registration, on reloads (done, refused, or failing for one instance) and at dispose', async () => {
    const counted = counting();
    registerStrategy('counted', counted.definition);
    const registry = new ResiliencePipelineRegistry({
      pipelines: { p: { counted: {} } as never, unused: { counted: {} } as never },
    });
    registry.getPipeline('p', 'a');
    registry.getPipeline('p', 'b');
    await registry.reload('p', { counted: {} } as never);
    // Refused by validation: nothing is made.
    await expect(registry.reload('p', { counted: {}, retry: { maxRetryAttempts: -1 } } as never)).rejects.toThrow(
      'Invalid configuration for pipeline "p"',
    );
    // Made for instance a, then failing for b: the one made for a is released, the old ones stay in use.
    await expect(registry.reload('p', { counted: { failFor: 'b' } } as never)).rejects.toThrow('cannot make one for b');
    await expect(registry.getPipeline('p', 'a').execute(() => 'still running')).resolves.toBe('still running');
    // A pipeline nobody asked for yet is checked by building it once.
    await registry.reload('unused', { counted: {} } as never);
    const inUse = counted.made.length - counted.released.length;
    expect(inUse).toBe(2); // p's instances a and b, nothing else
    await registry.dispose();
    expect([...counted.released].sort()).toEqual([...counted.made].sort());
    expect(counted.made.length).toBeGreaterThanOrEqual(7);
  });

  it('a builder whose strategy cannot be made releases the ones it made before', () => {
    const counted = counting();
    const builder = new ResiliencePipelineBuilder({ name: 'q', instanceName: 'x' })
      .add(counted.definition, {})
      .addTimeout(1_000)
      .add(counted.definition, { failFor: 'x' });
    expect(() => builder.build()).toThrow('cannot make one for x');
    expect(counted.released).toEqual(['x']);
  });
});
