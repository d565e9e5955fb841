import { Controller, Get, Module } from '@nestjs/common';
import { HealthCheck, HealthCheckService, type HealthCheckResult } from '@nestjs/terminus';
import { ResilienceHealthIndicator, ResilienceHealthModule } from '../../src/nest/terminus/index.js';

/**
 * `GET /health` (Terminus): every circuit of the registry. In this sample an open or isolated circuit
 * makes the check `down` (503, naming the circuit), a half-open one `degraded` (200); the library's
 * default counts open circuits as degraded.
 */
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly resilience: ResilienceHealthIndicator,
  ) {}

  @Get()
  @HealthCheck()
  check(): Promise<HealthCheckResult> {
    return this.health.check([() => this.resilience.isHealthy('resilience')]);
  }
}

@Module({
  imports: [ResilienceHealthModule.forRoot({ down: ['open', 'isolated'], degraded: ['half-open'] })],
  controllers: [HealthController],
})
export class SampleHealthModule {}
