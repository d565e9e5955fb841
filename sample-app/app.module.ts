import { Module } from '@nestjs/common';
import { ResilienceModule } from '../src/index.js';
import { ResilientHttpModule } from '../src/nest/http/index.js';
import { OAuthModule } from '../src/nest/oauth/index.js';
import { AuthController } from './auth/auth.controller.js';
import { DEMO_CLIENT, DemoIdentityProvider } from './auth/demo-identity.provider.js';
import { resiliencePipelines } from './config/resilience.config.js';
import { SAMPLE_CONFIG, SampleConfigModule, type SampleConfig } from './config/sample.config.js';
import { GatewayController } from './gateway/gateway.controller.js';
import { RpcWeatherController } from './rpc/rpc-weather.controller.js';
import { weatherRpcClients, WeatherRpcConfigModule } from './rpc/weather-rpc.config.js';
import { WeatherRpcController } from './rpc/weather-rpc.controller.js';
import { FlakyUpstreamServer } from './upstream/flaky-upstream.server.js';
import { UpstreamStatusController } from './upstream/upstream-status.controller.js';
import { WeatherController } from './weather/weather.controller.js';
import { WeatherService } from './weather/weather.service.js';

@Module({ providers: [DemoIdentityProvider], exports: [DemoIdentityProvider] })
class DemoIdentityModule {}

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
    // The weather upstream also served over TCP, and the resilient client that consumes it.
    WeatherRpcConfigModule,
    weatherRpcClients(),
    // Sign-in with PKCE: against OIDC_ISSUER when set, else against the built-in demo provider.
    OAuthModule.registerAsync({
      imports: [DemoIdentityModule],
      inject: [DemoIdentityProvider],
      useFactory: async (demo: DemoIdentityProvider) => {
        const appUrl = process.env.APP_URL ?? `http://127.0.0.1:${process.env.PORT ?? 3000}`;
        const redirectUri = `${appUrl}/auth/callback`;
        const external = process.env.OIDC_ISSUER;
        return {
          issuer: external ?? (await demo.issuer(redirectUri)),
          clientId: external ? process.env.OIDC_CLIENT_ID! : DEMO_CLIENT.clientId,
          clientSecret: external ? process.env.OIDC_CLIENT_SECRET : DEMO_CLIENT.clientSecret,
          redirectUri,
          scopes: ['openid', 'offline_access'],
          allowInsecureRequests: !external || process.env.OIDC_ALLOW_HTTP === 'true',
        };
      },
    }),
  ],
  controllers: [
    WeatherController,
    UpstreamStatusController,
    GatewayController,
    AuthController,
    WeatherRpcController,
    RpcWeatherController,
  ],
  providers: [FlakyUpstreamServer, WeatherService],
})
export class AppModule {}
