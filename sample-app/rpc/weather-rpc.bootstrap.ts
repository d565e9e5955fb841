import type { INestApplication } from '@nestjs/common';
import { Transport } from '@nestjs/microservices';
import { WEATHER_RPC_CONFIG, type WeatherRpcConfig } from './weather-rpc.config.js';

/**
 * Serves the app's `@MessagePattern` handlers over TCP too (a hybrid app). `inheritAppConfig` hands the
 * global exception filter to the microservice, so resilience rejections answer with their RPC payload.
 */
export async function connectWeatherRpc(app: INestApplication): Promise<WeatherRpcConfig> {
  const config = app.get<WeatherRpcConfig>(WEATHER_RPC_CONFIG);
  app.connectMicroservice({ transport: Transport.TCP, options: { ...config } }, { inheritAppConfig: true });
  await app.startAllMicroservices();
  return config;
}
