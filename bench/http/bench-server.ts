import 'reflect-metadata';
import {
  Controller,
  Get,
  Injectable,
  Module,
  UseInterceptors,
  type CallHandler,
  type ExecutionContext,
  type NestInterceptor,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { Observable } from 'rxjs';
import {
  CircuitBreaker,
  ResilienceInterceptor,
  ResilienceModule,
  Retry,
  UseResiliencePipeline,
} from '../../src/index.js';

/** An interceptor that does nothing: the floor of any interceptor-based approach. */
@Injectable()
class NoopInterceptor implements NestInterceptor {
  intercept(_context: ExecutionContext, next: CallHandler): Observable<unknown> {
    return next.handle();
  }
}

@Controller()
class BenchController {
  @Get('bare')
  bare(): { ok: boolean } {
    return { ok: true };
  }

  @Get('decorated')
  @Retry({ maxRetryAttempts: 3, delay: 0 })
  @CircuitBreaker({ kind: 'consecutive', failureThreshold: 5 })
  decorated(): { ok: boolean } {
    return { ok: true };
  }

  @Get('noop-interceptor')
  @UseInterceptors(NoopInterceptor)
  noop(): { ok: boolean } {
    return { ok: true };
  }
}

@Controller('intercepted')
@UseResiliencePipeline('bench')
@UseInterceptors(ResilienceInterceptor)
class InterceptedController {
  @Get()
  get(): { ok: boolean } {
    return { ok: true };
  }
}

@Module({
  imports: [
    ResilienceModule.forRoot({
      pipelines: { bench: { retry: { maxRetryAttempts: 3, delay: 0 }, circuitBreaker: { kind: 'consecutive' } } },
    }),
  ],
  controllers: [BenchController, InterceptedController],
  providers: [NoopInterceptor],
})
class BenchModule {}

async function main(): Promise<void> {
  const app = await NestFactory.create(BenchModule, { logger: false });
  await app.listen(0, '127.0.0.1');
  const url = (await app.getUrl()).replace('[::1]', '127.0.0.1');
  process.send?.({ url });
  process.on('message', (message) => {
    if (message === 'cpu') {
      const { user, system } = process.cpuUsage();
      process.send?.({ cpu: user + system });
    }
    if (message === 'stop') void app.close().then(() => process.exit(0));
  });
}

void main();
