import { Catch, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { OAUTH_RESPONSE_HEADERS } from '../../src/nest/oauth/index.js';
import { SignInFailedPage } from './auth.controller.js';

/**
 * Answers a failed callback for a browser: the failure's status (and `Retry-After`), the OAuth headers,
 * and an HTML page with a link back to `/auth/login?returnTo=<the page the login was started for>`.
 */
@Catch(SignInFailedPage)
export class SignInFailedFilter implements ExceptionFilter {
  constructor(private readonly adapterHost: HttpAdapterHost) {}

  catch(exception: SignInFailedPage, host: ArgumentsHost): void {
    const adapter = this.adapterHost.httpAdapter;
    const response: unknown = host.switchToHttp().getResponse();
    for (const [name, value] of Object.entries(OAUTH_RESPONSE_HEADERS)) adapter.setHeader(response, name, value);
    adapter.setHeader(response, 'Content-Type', 'text/html; charset=utf-8');
    const retryAfter = exception.failure.retryAfter;
    if (retryAfter !== undefined)
      adapter.setHeader(response, 'Retry-After', String(Math.max(1, Math.ceil(retryAfter / 1_000))));
    adapter.reply(response, exception.html(), exception.failure.status || 400);
  }
}
