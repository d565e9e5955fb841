import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { ResiliencePipelineRegistry } from '../src/index.js';
import { AppModule } from './app.module.js';
import { ResilienceConfigReloader } from './config/resilience-reload.service.js';
import { connectWeatherRpc } from './rpc/weather-rpc.bootstrap.js';
import { pipelineRows, startupText } from './startup/startup.banner.js';

async function bootstrap(): Promise<void> {
  // LOG_LEVEL=debug also shows the pipeline ResilienceModule composed for each decorated method.
  const debug = process.env.LOG_LEVEL === 'debug';
  const app = await NestFactory.create(AppModule, {
    logger: debug ? ['error', 'warn', 'log', 'debug'] : ['error', 'warn', 'log'],
  });
  // SIGHUP reloads the resilience file (ResilienceConfigReloader), so it is not a shutdown signal here:
  // without a list, Nest would also close the app on SIGHUP. process.exit(0) after a clean close.
  app.enableShutdownHooks(['SIGTERM', 'SIGINT'], { useProcessExit: true });
  const rpc = await connectWeatherRpc(app);
  const port = Number(process.env.PORT ?? 3000);
  const host = process.env.HOST ?? '127.0.0.1';
  await app.listen(port, host);
  const url = (await app.getUrl()).replace('[::1]', 'localhost');
  process.stdout.write(
    `\n${startupText({
      url,
      rpcPort: rpc.port,
      configFile: app.get(ResilienceConfigReloader).path,
      pipelines: pipelineRows(app.get(ResiliencePipelineRegistry)),
      adminToken: Boolean(process.env.ADMIN_TOKEN),
      store: process.env.REDIS_URL ? 'redis' : 'memory',
      pid: process.pid,
    })}\n\n`,
  );
}

void bootstrap();
