import { Module } from '@nestjs/common';
import { ResilienceModule } from '../src/index.js';
import { ResilientHttpModule } from '../src/nest/http/index.js';
import { resiliencePipelines } from './config/resilience.config.js';
import { SAMPLE_CONFIG, SampleConfigModule, type SampleConfig } from './config/sample.config.js';
import { GatewayController } from './gateway/gateway.controller.js';
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
    // The gateway's client runs through the "gateway" pipeline of the configuration (a standard HTTP pipeline).
    ResilientHttpModule.register({ timeout: 5_000, pipeline: 'gateway' }),
  ],
  controllers: [WeatherController, UpstreamStatusController, GatewayController],
  providers: [FlakyUpstreamServer, WeatherService],
})
export class AppModule {}
