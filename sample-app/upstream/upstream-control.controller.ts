import {
  BadRequestException,
  Body,
  Controller,
  Get,
  HttpCode,
  NotFoundException,
  Param,
  Post,
  Put,
  UseGuards,
} from '@nestjs/common';
import { SampleUpstreams } from './sample-upstreams.service.js';
import type { SteerableUpstream } from './steerable-upstream.server.js';
import { UpstreamControlGuard } from './upstream-control.guard.js';
import { isUpstreamMode, UPSTREAM_MODES, type UpstreamStatus } from './upstream-mode.model.js';

/**
 * Steers the upstreams: `GET /upstreams` lists them with their mode and request count,
 * `PUT|POST /upstreams/:name/mode` with `{ "mode": "outage" }` switches one (400 naming the modes for a
 * bad one, 404 for an unknown upstream). Behind `UpstreamControlGuard`.
 */
@Controller('upstreams')
@UseGuards(UpstreamControlGuard)
export class UpstreamControlController {
  constructor(private readonly upstreams: SampleUpstreams) {}

  @Get()
  list(): UpstreamStatus[] {
    return this.upstreams.all().map((u) => u.status());
  }

  @Get(':name')
  one(@Param('name') name: string): UpstreamStatus {
    return this.upstream(name).status();
  }

  @Put(':name/mode')
  @HttpCode(200)
  putMode(@Param('name') name: string, @Body() body: unknown): UpstreamStatus {
    return this.switch(name, body);
  }

  @Post(':name/mode')
  @HttpCode(200)
  postMode(@Param('name') name: string, @Body() body: unknown): UpstreamStatus {
    return this.switch(name, body);
  }

  private switch(name: string, body: unknown): UpstreamStatus {
    const upstream = this.upstream(name);
    const mode = typeof body === 'object' && body !== null ? (body as { mode?: unknown }).mode : undefined;
    if (!isUpstreamMode(mode)) {
      throw new BadRequestException({
        statusCode: 400,
        error: 'Bad Request',
        message: `mode must be one of ${UPSTREAM_MODES.join(', ')}`,
        modes: UPSTREAM_MODES,
      });
    }
    upstream.setMode(mode);
    return upstream.status();
  }

  private upstream(name: string): SteerableUpstream {
    const upstream = this.upstreams.find(name);
    if (!upstream) {
      throw new NotFoundException({
        statusCode: 404,
        error: 'Not Found',
        message: `no upstream of that name; known: ${this.upstreams
          .all()
          .map((u) => u.name)
          .join(', ')}`,
      });
    }
    return upstream;
  }
}
