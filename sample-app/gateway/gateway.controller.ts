import { Controller, Get, Param } from '@nestjs/common';
import { ResilientHttpClient } from '../../src/nest/http/index.js';
import { FlakyUpstreamServer } from '../upstream/flaky-upstream.server.js';

/**
 * A gateway route on the resilient HTTP client: the standard pipeline (rate limiter → total timeout →
 * retry with Retry-After → circuit breaker per upstream host → attempt timeout) in front of the upstream.
 */
@Controller('gateway')
export class GatewayController {
  constructor(
    private readonly http: ResilientHttpClient,
    private readonly upstream: FlakyUpstreamServer,
  ) {}

  @Get('forecast/:city')
  async forecast(@Param('city') city: string): Promise<unknown> {
    const response = await this.http.get(`${this.upstream.baseUrl}/forecast/${encodeURIComponent(city)}`);
    return response.data;
  }
}
