import { Module } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { APP_FILTER, APP_INTERCEPTOR } from '@nestjs/core';
import { RequestDeadlineInterceptor, ResilienceModule } from '../src/index.js';
import { ResilienceAdminModule } from '../src/nest/admin/index.js';
import { ResilientHttpModule } from '../src/nest/http/index.js';
import { OAuthModule } from '../src/nest/oauth/index.js';
import { AdminReloadController } from './admin/admin-reload.controller.js';
import { SampleAdminAccessModule, SampleAdminGuard } from './admin/sample-admin.guard.js';
import { SignInRequiredFilter } from './admin/sign-in-required.filter.js';
import { AuthController } from './auth/auth.controller.js';
import { SignInFailedFilter } from './auth/sign-in-failed.filter.js';
import { DEMO_CLIENT, DemoIdentityProvider } from './auth/demo-identity.provider.js';
import { SampleSessionModule } from './auth/sample-session.store.js';
import { SAMPLE_OAUTH_CONFIG, SampleOAuthConfigModule, type SampleOAuthConfig } from './config/oauth.config.js';
import { resilienceConfig, type ResilienceConfig } from './config/resilience.config.js';
import { modulePipelines, SAMPLE_PREDICATES } from './config/resilience-file.loader.js';
import { ResilienceConfigReloader } from './config/resilience-reload.service.js';
import { GatewayController } from './gateway/gateway.controller.js';
import { SampleHealthModule } from './health/health.controller.js';
import { SampleMetrics, SampleMetricsModule } from './metrics/prometheus-metrics.js';
import { RpcWeatherController } from './rpc/rpc-weather.controller.js';
import { weatherRpcClients, WeatherRpcConfigModule } from './rpc/weather-rpc.config.js';
import { WeatherRpcController } from './rpc/weather-rpc.controller.js';
import { CatalogController } from './catalog/catalog.controller.js';
import { CatalogService } from './catalog/catalog.service.js';
import { CatalogPrimaryServer, CatalogReplicaServer } from './upstream/catalog-upstream.servers.js';
import { OverloadController } from './overload/overload.controller.js';
import { HomeController } from './startup/home.controller.js';
import { FlakyUpstreamServer } from './upstream/flaky-upstream.server.js';
import { SampleUpstreams } from './upstream/sample-upstreams.service.js';
import { UpstreamControlController } from './upstream/upstream-control.controller.js';
import { UPSTREAM_CONTROL_GUARD, UpstreamControlGuard } from './upstream/upstream-control.guard.js';
import { upstreamDashboardActions } from './upstream/upstream-dashboard.actions.js';
import { UPSTREAM_OPTIONS, upstreamOptionsFromEnv } from './upstream/upstream.options.js';
import { UpstreamStatusController } from './upstream/upstream-status.controller.js';
import { WeatherController } from './weather/weather.controller.js';
import { WeatherService } from './weather/weather.service.js';

@Module({ providers: [DemoIdentityProvider], exports: [DemoIdentityProvider] })
class DemoIdentityModule {}

/** The resilience file as a configuration namespace (read once per application). */
const ResilienceFileModule = ConfigModule.forFeature(resilienceConfig);

@Module({
  imports: [
    // Nothing from .env: every setting is the environment's or the resilience file's.
    ConfigModule.forRoot({ ignoreEnvFile: true }),
    ResilienceFileModule,
    // The pipelines of sample-app/config/resilience.yaml (or RESILIENCE_CONFIG), validated when the app
    // starts. REDIS_URL: circuit state and rate limits in Redis — and, through the same store, the pending
    // logins; the sessions (SampleSessionStore) live in the same Redis.
    ResilienceModule.forRootAsync({
      imports: [ResilienceFileModule, SampleOAuthConfigModule, SampleMetricsModule],
      inject: [resilienceConfig.KEY, SAMPLE_OAUTH_CONFIG, SampleMetrics],
      useFactory: (file: ResilienceConfig, oauth: SampleOAuthConfig, metrics: SampleMetrics) => ({
        pipelines: modulePipelines(file),
        predicates: { ...SAMPLE_PREDICATES },
        telemetryListeners: [metrics.listener],
        // A handler's call (its budget, its criticality) is current after an await too, so the pipelines it
        // runs later inherit the caller's deadline (RequestDeadlineInterceptor, docs/deadlines.md).
        asyncContextPropagation: true,
        ...(oauth.redisUrl ? { store: { redis: { url: oauth.redisUrl, keyPrefix: oauth.redisKeyPrefix } } } : {}),
      }),
    }),
    // The admin API and the live dashboard under /resilience, for signed-in users (or ADMIN_TOKEN).
    ResilienceAdminModule.forRoot({
      path: 'resilience',
      // The dashboard's own buttons: one group per upstream, a button per mode (PUT /upstreams/:name/mode).
      // signInUrl: where the dashboard links to once its session has ended (it then says "signed out").
      dashboard: { actions: upstreamDashboardActions(), signInUrl: '/auth/login?returnTo=/resilience/dashboard' },
      control: true,
      guards: [SampleAdminGuard],
      imports: [SampleAdminAccessModule],
    }),
    SampleAdminAccessModule,
    SampleSessionModule,
    SampleHealthModule,
    SampleMetricsModule,
    // The gateway's client runs through the "gateway" pipeline of the file (a standard HTTP pipeline).
    ResilientHttpModule.register({ timeout: 5_000, pipeline: 'gateway' }),
    // The weather upstream also served over TCP, and the resilient client that consumes it.
    WeatherRpcConfigModule,
    weatherRpcClients(),
    // Sign-in with PKCE: against OIDC_ISSUER when set, else against the built-in demo provider. Settings from
    // the environment (config/oauth.config.ts); the token requests' from the file's `oauth` section.
    OAuthModule.registerAsync({
      imports: [DemoIdentityModule, SampleOAuthConfigModule, ResilienceFileModule],
      inject: [DemoIdentityProvider, SAMPLE_OAUTH_CONFIG, resilienceConfig.KEY],
      useFactory: async (demo: DemoIdentityProvider, c: SampleOAuthConfig, file: ResilienceConfig) => {
        const builtIn = c.issuer === undefined;
        const fromEnv = {
          attemptTimeout: c.tokenTimeout,
          deadline: c.tokenDeadline,
          retries: c.tokenRetries,
          retryDelay: c.tokenRetryDelay,
          breakerThreshold: c.breakerThreshold,
          breakDuration: c.breakDuration,
        };
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
          pendingLimits: {
            ...(c.pendingPerAddress !== undefined ? { perAddress: c.pendingPerAddress } : {}),
            ...(c.pendingTotal !== undefined ? { total: c.pendingTotal } : {}),
          },
          // The file's values, each overridden by its environment variable when that is set.
          tokenRequests: {
            ...file.tokenRequests,
            ...Object.fromEntries(Object.entries(fromEnv).filter(([, value]) => value !== undefined)),
          },
        };
      },
    }),
  ],
  controllers: [
    HomeController,
    WeatherController,
    UpstreamStatusController,
    GatewayController,
    AuthController,
    WeatherRpcController,
    RpcWeatherController,
    UpstreamControlController,
    CatalogController,
    OverloadController,
    AdminReloadController,
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
    // Who may switch the upstreams: the same people as the admin API.
    { provide: UPSTREAM_CONTROL_GUARD, useExisting: SampleAdminGuard },
    CatalogService,
    ResilienceConfigReloader,
    // The caller's budget (x-request-deadline-ms, grpc-timeout) on every route: 504 when it is spent,
    // else the deadline of the handler's call and of every pipeline it runs.
    { provide: APP_INTERCEPTOR, useClass: RequestDeadlineInterceptor },
    { provide: APP_FILTER, useClass: SignInRequiredFilter },
    { provide: APP_FILTER, useClass: SignInFailedFilter },
  ],
})
export class AppModule {}
