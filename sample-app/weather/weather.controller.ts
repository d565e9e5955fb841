import { Controller, Get, Param } from '@nestjs/common';
import { WeatherService, type Forecast } from './weather.service.js';

@Controller('weather')
export class WeatherController {
  constructor(private readonly weather: WeatherService) {}

  @Get(':city')
  forecast(@Param('city') city: string): Promise<Forecast> {
    return this.weather.forecast(city);
  }
}
