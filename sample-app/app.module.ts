import { Module } from '@nestjs/common';
import { ResilienceModule } from '../src/index.js';
import { ResilientHttpModule } from '../src/nest/http/index.js';
import { OAuthModule } from '../src/nest/oauth/index.js';
import { AuthController } from './auth/auth.controller.js';
import { DEMO_CLIENT, DemoIdentityProvider } from './auth/demo-identity.provider.js';
import { SAMPLE_OAUTH_CONFIG, SampleOAuthConfigModule, type SampleOAuthConfig } from './config/oauth.config.js';
import { resiliencePipelines } from './config/resilience.config.js';
import { SAMPLE_CONFIG, SampleConfigModule, type SampleConfig } from './config/sample.config.js';
import { GatewayController } from './gateway/gateway.controller.js';
import { RpcWeatherController } from './rpc/rpc-weather.controller.js';
import { weatherRpcClients, WeatherRpcConfigModule } from './rpc/weather-rpc.config.js';
import { WeatherRpcController } from './rpc/weather-rpc.controller.js';
import { CatalogController } from './catalog/catalog.controller.js';
import { CatalogService } from './catalog/catalog.service.js';
import { CatalogPrimaryServer, CatalogReplicaServer } from './upstream/catalog-upstream.servers.js';
import { FlakyUpstreamServer } from './upstream/flaky-upstream.server.js';
import { SampleUpstreams } from './upstream/sample-upstreams.service.js';
import { UpstreamControlController } from './upstream/upstream-control.controller.js';
import { UpstreamControlGuard } from './upstream/upstream-control.guard.js';
import { UPSTREAM_OPTIONS, upstreamOptionsFromEnv } from './upstream/upstream.options.js';
import { UpstreamStatusController } from './upstream/upstream-status.controller.js';
import { WeatherController } from './weather/weather.controller.js';
import { WeatherService } from './weather/weather.service.js';

@Module({ providers: [DemoIdentityProvider], exports: [DemoIdentityProvider] })
class DemoIdentityModule {}

@Module({
  imports: [
    SampleConfigModule,
    ResilienceModule.forRootAsync({
      imports: [SampleConfigModule, SampleOAuthConfigModule],
      inject: [SAMPLE_CONFIG, SAMPLE_OAUTH_CONFIG],
      // REDIS_URL: circuit state and rate limits in Redis — and, through the same store, the pending logins.
      useFactory: (config: SampleConfig, oauth: SampleOAuthConfig) => ({
        pipelines: resiliencePipelines(config),
        ...(oauth.redisUrl ? { store: { redis: { url: oauth.redisUrl, keyPrefix: oauth.redisKeyPrefix } } } : {}),
      }),
    }),
    // The gateway's client runs through the "gateway" pipeline of the configuration (a standard HTTP pipeline).
    ResilientHttpModule.register({ timeout: 5_000, pipeline: 'gateway' }),
    // The weather upstream also served over TCP, and the resilient client that consumes it.
    WeatherRpcConfigModule,
    weatherRpcClients(),
    // Sign-in with PKCE: against OIDC_ISSUER when set, else against the built-in demo provider. Every
    // setting comes from the environment (config/oauth.config.ts).
    OAuthModule.registerAsync({
      imports: [DemoIdentityModule, SampleOAuthConfigModule],
      inject: [DemoIdentityProvider, SAMPLE_OAUTH_CONFIG],
      useFactory: async (demo: DemoIdentityProvider, c: SampleOAuthConfig) => {
        const builtIn = c.issuer === undefined;
        return {
          issuer:
            c.issuer ??
            (await demo.issuer({
              redirectUri: c.redirectUri,
              postLogoutRedirectUri: c.postLogoutRedirectUri,
              authMethod: c.clientAuthentication,
            })),
          clientId: c.clientId ?? DEMO_CLIENT.clientId,
          clientSecret: builtIn && c.clientAuthentication !== 'none' ? DEMO_CLIENT.clientSecret : c.clientSecret,
          clientAuthentication: c.clientAuthentication,
          clientPrivateKey: c.clientPrivateKey,
          clientPrivateKeyId: c.clientPrivateKeyId,
          redirectUri: c.redirectUri,
          postLogoutRedirectUri: c.postLogoutRedirectUri,
          logoutWithIdTokenHint: c.logoutWithIdTokenHint,
          scopes: c.scopes,
          pkceMethod: c.pkceMethod,
          allowInsecureRequests: builtIn || c.allowHttp,
          tokenEndpoint: c.tokenEndpoint,
          deferDiscovery: c.deferDiscovery,
          pendingTtl: c.pendingTtl,
          tokenRequests: {
            attemptTimeout: c.tokenTimeout,
            deadline: c.tokenDeadline,
            retries: c.tokenRetries,
            retryDelay: c.tokenRetryDelay,
            breakerThreshold: c.breakerThreshold,
            breakDuration: c.breakDuration,
          },
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
    UpstreamControlController,
    CatalogController,
  ],
  providers: [
    FlakyUpstreamServer,
    WeatherService,
    // The steerable upstreams (GET /upstreams, PUT /upstreams/:name/mode) and the hedged catalog route.
    { provide: UPSTREAM_OPTIONS, useFactory: () => upstreamOptionsFromEnv() },
    CatalogPrimaryServer,
    CatalogReplicaServer,
    SampleUpstreams,
    UpstreamControlGuard,
    CatalogService,
  ],
})
export class AppModule {}
