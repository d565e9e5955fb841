import { Controller, Get, Param } from '@nestjs/common';
import { WeatherService, type Forecast } from './weather.service.js';

@Controller('weather')
export class WeatherController {
  constructor(private readonly weather: WeatherService) {}

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
}
