import { Controller, HttpCode, Post, UnprocessableEntityException, UseGuards } from '@nestjs/common';
import { ResilienceValidationError } from '../../src/index.js';
import { ResilienceConfigReloader, type ReloadReport } from '../config/resilience-reload.service.js';
import { SampleAdminGuard } from './sample-admin.guard.js';

/**
 * `POST /admin/reload`: what `SIGHUP` does, answered with what changed — or 422 with the file's problems
 * (nothing changed then). Behind the admin guard.
 */
@Controller('admin')
@UseGuards(SampleAdminGuard)
export class AdminReloadController {
  constructor(private readonly reloader: ResilienceConfigReloader) {}

  @Post('reload')
  @HttpCode(200)
  async reload(): Promise<ReloadReport> {
    try {
      return await this.reloader.reload();
    } catch (error) {
      if (!(error instanceof ResilienceValidationError)) throw error;
      throw new UnprocessableEntityException({
        statusCode: 422,
        error: 'invalid_configuration',
        message: 'The resilience file was refused; the running pipelines stay as they are.',
        problems: error.issues.map((issue) => ({ path: issue.path, rule: issue.rule })),
      });
    }
  }
}
