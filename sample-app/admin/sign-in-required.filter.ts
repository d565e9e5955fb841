import { Catch, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';

/** A browser asked for an admin page without being signed in: it is sent to sign in, and back. */
export class SignInRequired extends Error {
  constructor(readonly returnTo: string) {
    super('sign-in required');
    this.name = 'SignInRequired';
  }
}

/** Where `/auth/login` sends the browser back to: only a path of this app (the OAuth client checks it too). */
export function signInUrl(returnTo: string): string {
  const local = returnTo.startsWith('/') && !returnTo.startsWith('//') && !returnTo.includes('\\');
  return local ? `/auth/login?returnTo=${encodeURIComponent(returnTo).replace(/%2F/g, '/')}` : '/auth/login';
}

/** Answers `SignInRequired` with `302 Found` to `/auth/login?returnTo=<the page>`. */
@Catch(SignInRequired)
export class SignInRequiredFilter implements ExceptionFilter {
  constructor(private readonly adapterHost: HttpAdapterHost) {}

  catch(exception: SignInRequired, host: ArgumentsHost): void {
    const response: unknown = host.switchToHttp().getResponse();
    const adapter = this.adapterHost.httpAdapter;
    adapter.setHeader(response, 'Cache-Control', 'no-store');
    adapter.redirect(response, 302, signInUrl(exception.returnTo));
  }
}
