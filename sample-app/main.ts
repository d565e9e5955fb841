import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module.js';
import { connectWeatherRpc } from './rpc/weather-rpc.bootstrap.js';

async function bootstrap(): Promise<void> {
  // LOG_LEVEL=debug also shows the pipeline ResilienceModule composed for each decorated method.
  const debug = process.env.LOG_LEVEL === 'debug';
  const app = await NestFactory.create(AppModule, {
    logger: debug ? ['error', 'warn', 'log', 'debug'] : ['error', 'warn', 'log'],
  });
  app.enableShutdownHooks();
  const rpc = await connectWeatherRpc(app);
  const port = Number(process.env.PORT ?? 3000);
  const host = process.env.HOST ?? '127.0.0.1';
  await app.listen(port, host);
  const url = await app.getUrl();
  Logger.log(
    `Sample app on ${url} — try ${url}/weather/lisbon, ${url}/weather/atlantis, ${url}/weather/atlantis/strict, ${url}/upstream/status, ${url}/rpc/weather/lisbon (over TCP on port ${rpc.port})`,
    'Bootstrap',
  );
}

void bootstrap();
