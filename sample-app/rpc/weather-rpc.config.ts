import { Module, type DynamicModule } from '@nestjs/common';
import { createServer } from 'node:net';
import { ClientsModule, Transport } from '@nestjs/microservices';
import { ResilientClientsModule, type RemoteRpcErrorPredicate } from '../../src/nest/microservices/index.js';

/** Where the weather service listens over TCP (the app serves it itself, as a hybrid app). */
export interface WeatherRpcConfig {
  readonly host: string;
  readonly port: number;
}

export const WEATHER_RPC_CONFIG = Symbol('WEATHER_RPC_CONFIG');

/**
 * `RPC_HOST` and `RPC_PORT` (default `127.0.0.1:3001`). `RPC_PORT=0` asks for a free port: see
 * `resolveWeatherRpcConfig`. Anything but a port number fails the start.
 */
export function weatherRpcConfigFromEnv(env: NodeJS.ProcessEnv = process.env): WeatherRpcConfig {
  const text = env.RPC_PORT?.trim() || '3001';
  const port = Number(text);
  if (!/^\d+$/.test(text) || port > 65_535) {
    throw new Error(
      `RPC_PORT must be a port number from 0 to 65535 (0: a free port), not ${JSON.stringify(env.RPC_PORT)}`,
    );
  }
  return { host: env.RPC_HOST ?? '127.0.0.1', port };
}

/**
 * The config with port 0 replaced by a port free on the host right now. The service and its client must
 * agree on the port before either starts (the client is made with the app, the service listens later),
 * so the port is chosen here, once, rather than by the service's own listen.
 */
export async function resolveWeatherRpcConfig(config: WeatherRpcConfig): Promise<WeatherRpcConfig> {
  if (config.port !== 0) return config;
  const port = await new Promise<number>((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, config.host, () => {
      const { port: free } = probe.address() as { port: number };
      probe.close(() => resolve(free));
    });
  });
  return { ...config, port };
}

@Module({
  providers: [{ provide: WEATHER_RPC_CONFIG, useFactory: () => resolveWeatherRpcConfig(weatherRpcConfigFromEnv()) }],
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
