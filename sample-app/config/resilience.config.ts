import type { PipelineConfig } from '../../src/index.js';
import { standardHttpPipeline } from '../../src/nest/http/index.js';
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
    // The standard HTTP pipeline (rate limiter → total timeout → retry → circuit breaker per host →
    // attempt timeout), tuned for the demo.
    gateway: standardHttpPipeline({
      retry: { maxRetryAttempts: config.weatherRetries, delay: config.weatherRetryDelay, useJitter: true },
      attemptTimeout: config.weatherAttemptTimeout,
      totalTimeout: 5 * config.weatherAttemptTimeout,
      circuitBreaker: { kind: 'consecutive', failureThreshold: 10, breakDuration: config.weatherBreakDuration },
    }),
    // GET /catalog/:id: the primary first; after 100 ms without an answer (or at once on a failure) the
    // replica too, and the first good answer wins.
    catalog: { hedging: { maxHedgedAttempts: 1, delay: 100 } },
    upstreamStatus: {
      retry: { maxRetryAttempts: 2, delay: 0, shouldHandle: 'http-transient' },
      timeout: 1_000,
    },
  };
}
