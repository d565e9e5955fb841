import { Module } from '@nestjs/common';
import { ResilienceModule } from '../src/index.js';
import { resiliencePipelines } from './config/resilience.config.js';
import { SAMPLE_CONFIG, SampleConfigModule, type SampleConfig } from './config/sample.config.js';
import { FlakyUpstreamServer } from './upstream/flaky-upstream.server.js';
import { UpstreamStatusController } from './upstream/upstream-status.controller.js';
import { WeatherController } from './weather/weather.controller.js';
import { WeatherService } from './weather/weather.service.js';

@Module({
  imports: [
    SampleConfigModule,
    ResilienceModule.forRootAsync({
      imports: [SampleConfigModule],
      inject: [SAMPLE_CONFIG],
      useFactory: (config: SampleConfig) => ({ pipelines: resiliencePipelines(config) }),
    }),
  ],
  controllers: [WeatherController, UpstreamStatusController],
  providers: [FlakyUpstreamServer, WeatherService],
})
export class AppModule {}
