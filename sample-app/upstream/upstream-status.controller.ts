import { Controller, Get, UseInterceptors } from '@nestjs/common';
import { ResilienceInterceptor, UseResiliencePipeline } from '../../src/index.js';
import { UpstreamError } from '../weather/weather.service.js';
import { FlakyUpstreamServer } from './flaky-upstream.server.js';

/** The interceptor path: every handler of this controller runs through the "upstreamStatus" pipeline. */
@Controller('upstream')
@UseResiliencePipeline('upstreamStatus')
@UseInterceptors(ResilienceInterceptor)
export class UpstreamStatusController {
  constructor(private readonly upstream: FlakyUpstreamServer) {}

  @Get('status')
  async status(): Promise<{ status: string; requests: number }> {
    const response = await fetch(`${this.upstream.baseUrl}/forecast/status-check`);
    if (!response.ok) throw new UpstreamError(response.status);
    return { status: 'reachable', requests: this.upstream.requestCount };
  }
}
