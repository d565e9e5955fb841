import { Controller, Get, Param, Req } from '@nestjs/common';
import { ResilienceContext, ResiliencePipelineRegistry, ResilienceProperties } from '../../src/index.js';
import { SampleSessionStore, type CookieRequest } from '../auth/sample-session.store.js';
import { CALLER } from '../config/resilience-file.loader.js';
import { WeatherService, type Forecast } from './weather.service.js';

@Controller('weather')
export class WeatherController {
  constructor(
    private readonly weather: WeatherService,
    private readonly registry: ResiliencePipelineRegistry,
    private readonly sessions: SampleSessionStore,
  ) {}

  /** Retries, then falls back: always 200. */
  @Get(':city')
  forecast(@Param('city') city: string): Promise<Forecast> {
    return this.weather.forecast(city);
  }

  /** Retries, no fallback: 500 when the upstream keeps failing, 503 + Retry-After once the circuit is open. */
  @Get(':city/strict')
  strictForecast(@Param('city') city: string): Promise<Forecast> {
    return this.weather.strictForecast(city);
  }

  /**
   * The forecast behind the "weatherPerUser" limit: a window per signed-in user, else per client IP;
   * beyond it 429 with Retry-After.
   */
  @Get(':city/limited')
  async limitedForecast(@Param('city') city: string, @Req() req: CookieRequest & { ip?: string }): Promise<Forecast> {
    const user = (await this.sessions.fromRequest(req))?.subject;
    const properties = new ResilienceProperties().set(CALLER, user ? `user:${user}` : `ip:${req.ip ?? 'unknown'}`);
    const context = new ResilienceContext({ operationKey: 'WeatherController.limitedForecast', properties });
    return this.registry.getPipeline<Forecast>('weatherPerUser').execute(() => this.weather.forecast(city), context);
  }
}
