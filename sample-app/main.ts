import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module.js';

async function bootstrap(): Promise<void> {
  const app = await NestFactory.create(AppModule);
  app.enableShutdownHooks();
  const port = Number(process.env.PORT ?? 3000);
  const host = process.env.HOST ?? '127.0.0.1';
  await app.listen(port, host);
  const url = await app.getUrl();
  Logger.log(`Sample app on ${url} — try ${url}/weather/lisbon and ${url}/weather/atlantis`, 'Bootstrap');
}

void bootstrap();
