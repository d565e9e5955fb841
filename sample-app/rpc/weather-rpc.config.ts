import { Module, type DynamicModule } from '@nestjs/common';
import { ClientsModule, Transport } from '@nestjs/microservices';
import { ResilientClientsModule, type RemoteRpcErrorPredicate } from '../../src/nest/rpc/index.js';

/** Where the weather service listens over TCP (the app serves it itself, as a hybrid app). */
export interface WeatherRpcConfig {
  readonly host: string;
  readonly port: number;
}

export const WEATHER_RPC_CONFIG = Symbol('WEATHER_RPC_CONFIG');

export function weatherRpcConfigFromEnv(env: NodeJS.ProcessEnv = process.env): WeatherRpcConfig {
  return { host: env.RPC_HOST ?? '127.0.0.1', port: Number(env.RPC_PORT ?? 3001) };
}

@Module({
  providers: [{ provide: WEATHER_RPC_CONFIG, useFactory: () => weatherRpcConfigFromEnv() }],
  exports: [WEATHER_RPC_CONFIG],
})
export class WeatherRpcConfigModule {}

/** The TCP client of the weather service. */
export const WEATHER_RPC_PROXY = 'WEATHER_RPC_PROXY';

/** A 503 of the upstream, passed on by the weather handler: worth repeating, and a sign of trouble. */
const upstreamUnavailable: RemoteRpcErrorPredicate = (error) => (error as { status?: unknown }).status === 503;

/**
 * The resilient client `weather`: the "rpcWeather" pipeline of the resilience file (the standard RPC
 * pipeline — total timeout → retry → circuit breaker → attempt timeout — with short retry delays),
 * retrying and counting the upstream's 503s that the weather handler passes on for `weather.forecast`.
 */
export function weatherRpcClients(): DynamicModule {
  return ResilientClientsModule.register({
    imports: [
      ClientsModule.registerAsync([
        {
          name: WEATHER_RPC_PROXY,
          imports: [WeatherRpcConfigModule],
          inject: [WEATHER_RPC_CONFIG],
          useFactory: (config: WeatherRpcConfig) => ({ transport: Transport.TCP, options: { ...config } }),
        },
      ]),
    ],
    clients: {
      weather: {
        client: WEATHER_RPC_PROXY,
        pipeline: 'rpcWeather',
        patterns: {
          'weather.forecast': { retryRemoteErrors: upstreamUnavailable, countRemoteErrors: upstreamUnavailable },
        },
      },
    },
  });
}
