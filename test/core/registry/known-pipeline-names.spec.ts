import { describe, expect, it } from '@jest/globals';
import { OptionsValidator, ResiliencePipelineRegistry } from '../../../src/core.entry.js';

describe('ResiliencePipelineRegistry.knownPipelineNames', () => {
  it('lists the pipelines given, valid or not, those added by code and those built with createBuilder, once and sorted', () => {
    const registry = new ResiliencePipelineRegistry({ pipelines: { payments: { timeout: 1_000 } } });
    registry.addPipelines({ broken: { timeout: -1 } }, new OptionsValidator(''));
    registry.getOrAddPipeline('search', (b) => b.addTimeout(1_000));
    expect(registry.knownPipelineNames).toEqual(['broken', 'payments', 'search']);

    const first = registry.createBuilder('Orders.find').addTimeout(1_000).build();
    const second = registry.createBuilder('Orders.find', 'eu').addTimeout(1_000).build();
    registry.createBuilder<unknown>('Never.built'); // a builder whose pipeline was never built is not listed
    expect(registry.knownPipelineNames).toEqual(['Orders.find', 'broken', 'payments', 'search']);
    expect(registry.pipelineNames).toEqual(['payments', 'search']);
    expect([first, second]).toHaveLength(2); // both kept alive until here
  });
});
