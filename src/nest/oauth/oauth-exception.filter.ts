import { Catch, HttpStatus, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { OAuthFailure } from '../../oauth/index.js';
import { OAUTH_RESPONSE_HEADERS } from './oauth-response.headers.js';

/**
 * Answers `OAuthFailure`s with their status and stable code, `Cache-Control: no-store`,
 * `Referrer-Policy: no-referrer` and — when known — `Retry-After` (seconds); never with details that
 * could leak hosts or secrets. Everything else goes on to the next filter.
 *
 * @publicApi
 */
@Catch(OAuthFailure)
export class OAuthExceptionFilter implements ExceptionFilter {
  constructor(private readonly adapterHost: HttpAdapterHost) {}

  catch(exception: OAuthFailure, host: ArgumentsHost): void {
    const adapter = this.adapterHost.httpAdapter;
    const response = host.switchToHttp().getResponse<unknown>();
    for (const [name, value] of Object.entries(OAUTH_RESPONSE_HEADERS)) adapter.setHeader(response, name, value);
    if (exception.retryAfter !== undefined) {
      adapter.setHeader(response, 'Retry-After', String(Math.max(1, Math.ceil(exception.retryAfter / 1_000))));
    }
    const status = exception.status || HttpStatus.BAD_REQUEST;
    const body: Record<string, unknown> = { statusCode: status, error: exception.code, message: exception.message };
    if (exception.providerError !== undefined) body.providerError = exception.providerError;
    adapter.reply(response, body, status);
  }
}
