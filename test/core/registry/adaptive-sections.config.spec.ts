import { describe, expect, it } from '@jest/globals';
import { ResiliencePipelineRegistry, ResilienceValidationError } from '../../../src/core.entry.js';
import { FakeTimeProvider, getPipelineDescriptor } from '../../../src/testing/index.js';

describe('the adaptive sections of configuration', () => {
  it('read their strings by their options schema: a bare number, limits and durations', async () => {
    const registry = new ResiliencePipelineRegistry({
      timeProvider: new FakeTimeProvider(),
      pipelines: {
        bare: { adaptiveConcurrency: '30' },
        full: {
          adaptiveConcurrency: {
            algorithm: 'aimd',
            minLimit: '2' as unknown as number,
            slowCallDuration: '2s' as unknown as number,
          },
          adaptiveThrottling: { window: 'PT1M' as unknown as number },
        },
      },
    });
    const bare = getPipelineDescriptor(registry.getPipeline('bare')).strategies;
    expect(bare.map((s) => [s.type, s.options])).toEqual([['adaptive-concurrency', { initialLimit: 30 }]]);
    const full = getPipelineDescriptor(registry.getPipeline('full')).strategies;
    expect(full.map((s) => s.type)).toEqual(['adaptive-concurrency', 'adaptive-throttling']);
    expect(full[0].options).toMatchObject({ algorithm: 'aimd', minLimit: 2, slowCallDuration: 2_000 });
    expect(full[1].options).toMatchObject({ window: 60_000 });
    await registry.dispose();
  });

  it('report every unreadable value with its path at start-up', () => {
    let caught: unknown;
    try {
      new ResiliencePipelineRegistry({
        pipelines: {
          p: {
            adaptiveConcurrency: 'many',
            adaptiveThrottling: { window: 'soon' as unknown as number, k: 0.5 },
          },
        },
      }).getPipeline('p');
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ResilienceValidationError);
    const paths = (caught as ResilienceValidationError).issues.map((i) => i.path);
    expect(paths).toEqual(
      expect.arrayContaining([
        expect.stringContaining('adaptiveConcurrency.initialLimit'),
        expect.stringContaining('adaptiveThrottling.window'),
        expect.stringContaining('adaptiveThrottling.k'),
      ]),
    );
  });
});
