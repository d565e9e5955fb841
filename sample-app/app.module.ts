import { Module } from '@nestjs/common';
import { FlakyUpstreamServer } from './upstream/flaky-upstream.server.js';
import { WeatherController } from './weather/weather.controller.js';
import { DEFAULT_WEATHER_OPTIONS, WEATHER_OPTIONS } from './weather/weather.options.js';
import { WeatherService } from './weather/weather.service.js';

@Module({
  controllers: [WeatherController],
  providers: [FlakyUpstreamServer, WeatherService, { provide: WEATHER_OPTIONS, useValue: DEFAULT_WEATHER_OPTIONS }],
})
export class AppModule {}
