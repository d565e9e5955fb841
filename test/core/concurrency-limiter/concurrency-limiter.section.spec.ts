import { describe, expect, it } from '@jest/globals';
import {
  concurrencyLimiterRegistration,
  RateLimiterRejectedError,
  ResiliencePipelineRegistry,
  ResilienceValidationError,
} from '../../../src/core.entry.js';
import { deferred } from '../../utils/flaky.js';

describe('the concurrencyLimiter section', () => {
  it('is a concurrency limit whatever kind is written, with its queue', async () => {
    const registry = new ResiliencePipelineRegistry({
      pipelines: { p: { concurrencyLimiter: { kind: 'token-bucket', permitLimit: 1, queueLimit: 1 } as never } },
    });
    const pipeline = registry.getPipeline('p');
    expect(pipeline.describe()).toEqual([{ type: 'concurrency-limiter', name: undefined }]);
    const gate = deferred<string>();
    const running = pipeline.execute(() => gate.promise);
    const queued = pipeline.execute(() => 'queued');
    await expect(pipeline.execute(() => 'rejected')).rejects.toBeInstanceOf(RateLimiterRejectedError);
    gate.resolve('running');
    await expect(Promise.all([running, queued])).resolves.toEqual(['running', 'queued']);
    expect(registry.limiterStatistics()).toEqual([
      expect.objectContaining({
        pipelineName: 'p',
        section: 'concurrencyLimiter',
        kind: 'concurrency',
        permitLimit: 1,
      }),
    ]);
    await registry.dispose();
  });

  it('reads a number as the permit limit and validates it under the section', () => {
    let error: unknown;
    try {
      new ResiliencePipelineRegistry({ pipelines: { p: { concurrencyLimiter: 0 } } });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ResilienceValidationError);
    expect((error as ResilienceValidationError).issues).toEqual([
      { path: 'pipelines.p.concurrencyLimiter.permitLimit', value: 0, rule: 'must be an integer >= 1' },
    ]);
  });

  it('is the @ConcurrencyLimit decorator of the rate limiter engine', () => {
    expect(concurrencyLimiterRegistration.type).toBe('concurrency-limiter');
    expect(concurrencyLimiterRegistration.sections?.concurrencyLimiter?.decorator).toBe('ConcurrencyLimit');
    expect(concurrencyLimiterRegistration.events).toEqual(['OnRateLimiterRejected']);
  });
});
