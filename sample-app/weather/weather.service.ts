import { Inject, Injectable, Logger } from '@nestjs/common';
import { ResiliencePipelineBuilder, type ResiliencePipeline } from '../../src/index.js';
import { FlakyUpstreamServer } from '../upstream/flaky-upstream.server.js';
import { WEATHER_OPTIONS, type WeatherOptions } from './weather.options.js';

export interface Forecast {
  readonly city: string;
  readonly temperature: number | null;
  readonly sky: string;
  /** `live` from the upstream, or `fallback` when it could not be reached. */
  readonly source: 'live' | 'fallback';
}

class UpstreamError extends Error {
  constructor(readonly status: number) {
    super(`upstream answered ${status}`);
    this.name = 'UpstreamError';
  }
}

/** Calls the flaky upstream through fallback → retry → timeout, logging every retry and fallback. */
@Injectable()
export class WeatherService {
  private readonly logger = new Logger(WeatherService.name);
  private readonly pipeline: ResiliencePipeline<Forecast>;

  constructor(
    private readonly upstream: FlakyUpstreamServer,
    @Inject(WEATHER_OPTIONS) options: WeatherOptions,
  ) {
    this.pipeline = new ResiliencePipelineBuilder<Forecast>({ name: 'weather' })
      .addFallback({
        fallbackAction: ({ context }) => ({
          city: context.operationKey ?? 'unknown',
          temperature: null,
          sky: 'unknown',
          source: 'fallback',
        }),
        onFallback: ({ outcome }) =>
          this.logger.warn(`fallback used: ${outcome.ok ? 'unexpected result' : String(outcome.error)}`),
      })
      .addRetry({
        maxRetryAttempts: options.maxRetryAttempts,
        backoffType: 'exponential',
        delay: options.retryDelay,
        onRetry: ({ attemptNumber, retryDelay, outcome }) =>
          this.logger.log(
            `retry ${attemptNumber + 1} in ${retryDelay} ms after ${outcome.ok ? 'a bad result' : String(outcome.error)}`,
          ),
      })
      .addTimeout(options.attemptTimeout)
      .build();
  }

  forecast(city: string): Promise<Forecast> {
    return this.pipeline.execute(
      async ({ signal }) => {
        const response = await fetch(`${this.upstream.baseUrl}/forecast/${encodeURIComponent(city)}`, { signal });
        if (!response.ok) throw new UpstreamError(response.status);
        const body = (await response.json()) as Omit<Forecast, 'source'>;
        return { ...body, source: 'live' };
      },
      { operationKey: city },
    );
  }
}
