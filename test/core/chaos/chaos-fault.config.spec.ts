import { describe, expect, it } from '@jest/globals';
import { ResiliencePipelineRegistry, ResilienceValidationError } from '../../../src/core.entry.js';

describe('the chaosFault configuration section', () => {
  it('makes an Error of a string message', async () => {
    const registry = new ResiliencePipelineRegistry({
      pipelines: { broken: { chaosFault: { injectionRate: 1, message: 'injected' } } },
    });
    await expect(registry.getPipeline('broken').execute(() => 1)).rejects.toThrow('injected');
  });

  it('reports a message that is not a string as one validation problem at its path', () => {
    let error: unknown;
    try {
      new ResiliencePipelineRegistry({
        pipelines: { broken: { chaosFault: { message: { toString: null } as unknown as string } } },
      });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ResilienceValidationError);
    expect((error as ResilienceValidationError).issues).toEqual([
      expect.objectContaining({ path: expect.stringMatching(/chaosFault\.message$/), rule: 'must be a string' }),
    ]);
  });
});
