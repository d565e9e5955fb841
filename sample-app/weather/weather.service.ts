import { Injectable, Logger } from '@nestjs/common';
import { currentResilienceContext, Fallback, UseResiliencePipeline } from '../../src/index.js';
import { FlakyUpstreamServer } from '../upstream/flaky-upstream.server.js';

export interface Forecast {
  readonly city: string;
  readonly temperature: number | null;
  readonly sky: string;
  /** `live` from the upstream, or `fallback` when it could not be reached. */
  readonly source: 'live' | 'fallback';
}

/** A non-2xx answer of the upstream; its `status` lets the `http-transient` predicate classify it. */
export class UpstreamError extends Error {
  constructor(readonly status: number) {
    super(`upstream answered ${status}`);
    this.name = 'UpstreamError';
  }
}

/**
 * Calls the flaky upstream through the "weather" pipeline of the resilience file (retry → circuit breaker →
 * timeout), nested whole, so a reload of the file applies here too; one circuit for every method that
 * names it. `forecast` has a fallback of its own around it.
 */
@Injectable()
export class WeatherService {
  private readonly logger = new Logger(WeatherService.name);

  constructor(private readonly upstream: FlakyUpstreamServer) {}

  @Fallback('unknownForecast')
  @UseResiliencePipeline('weather')
  forecast(city: string): Promise<Forecast> {
    return this.fetchForecast(city);
  }

  /** The same call without a fallback: an open circuit reaches the client as 503 with Retry-After. */
  @UseResiliencePipeline('weather')
  strictForecast(city: string): Promise<Forecast> {
    return this.fetchForecast(city);
  }

  unknownForecast(city: string, error: unknown): Forecast {
    this.logger.warn(`fallback for ${city}: ${String(error)}`);
    return { city, temperature: null, sky: 'unknown', source: 'fallback' };
  }

  private async fetchForecast(city: string): Promise<Forecast> {
    const attempt = currentResilienceContext(); // read before the first await
    if (attempt && attempt.attemptNumber > 0) this.logger.log(`retry ${attempt.attemptNumber} for ${city}`);
    const response = await fetch(`${this.upstream.baseUrl}/forecast/${encodeURIComponent(city)}`, {
      signal: attempt?.signal,
    });
    if (!response.ok) throw new UpstreamError(response.status);
    const body = (await response.json()) as Omit<Forecast, 'source'>;
    return { ...body, source: 'live' };
  }
}
