import type { PipelineConfig } from '../../src/index.js';
import type { SampleConfig } from './sample.config.js';

/** The named pipelines of the sample app, as plain data (they could as well come from a JSON file). */
export function resiliencePipelines(config: SampleConfig): Record<string, PipelineConfig> {
  return {
    weather: {
      retry: {
        maxRetryAttempts: config.weatherRetries,
        backoffType: 'exponential',
        delay: config.weatherRetryDelay,
        shouldHandle: ['http-transient', 'transient-network'],
      },
      circuitBreaker: {
        kind: 'consecutive',
        failureThreshold: config.weatherFailureThreshold,
        breakDuration: config.weatherBreakDuration,
        shouldHandle: 'http-transient',
      },
      timeout: config.weatherAttemptTimeout,
    },
    upstreamStatus: {
      retry: { maxRetryAttempts: 2, delay: 0, shouldHandle: 'http-transient' },
      timeout: 1_000,
    },
  };
}
