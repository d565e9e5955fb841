// The code under test: a client whose calls go through a pipeline (retry → circuit breaker → timeout)
// on a clock the caller gives, so a test can drive it with a fake one.
import {
  handleAllErrors,
  ResiliencePipelineRegistry,
  type ResiliencePipeline,
  type TimeProvider,
} from 'nest-resilience/core';

export interface QuoteSource {
  latest(signal: AbortSignal): Promise<number>;
}

export function createQuoteRegistry(timeProvider?: TimeProvider): ResiliencePipelineRegistry {
  const registry = new ResiliencePipelineRegistry({ timeProvider });
  registry.registerPredicate('any-error', handleAllErrors);
  registry.addPipelines({
    quotes: {
      retry: { maxRetryAttempts: 3, backoffType: 'exponential', delay: '1s', shouldHandle: 'any-error' },
      circuitBreaker: { kind: 'consecutive', failureThreshold: 4, breakDuration: '30s' },
      timeout: '2s',
    },
  });
  return registry;
}

export class QuoteClient {
  private readonly pipeline: ResiliencePipeline<number>;

  constructor(
    registry: ResiliencePipelineRegistry,
    private readonly source: QuoteSource,
  ) {
    this.pipeline = registry.getPipeline<number>('quotes');
  }

  latest(): Promise<number> {
    return this.pipeline.execute(({ signal }) => this.source.latest(signal));
  }
}
