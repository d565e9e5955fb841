import { Controller, Get } from '@nestjs/common';
import { HealthCheck, HealthCheckService } from '@nestjs/terminus';
import { ResilienceHealthIndicator } from '../../src/nest/terminus/index.js';

/** `GET /health`: Terminus with the package's indicator under the key `resilience`, as the docs show. */
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly resilience: ResilienceHealthIndicator,
  ) {}

  @Get()
  @HealthCheck()
  check() {
    return this.health.check([() => this.resilience.isHealthy('resilience')]);
  }
}
