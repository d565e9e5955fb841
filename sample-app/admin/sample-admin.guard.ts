import {
  Inject,
  Injectable,
  Module,
  UnauthorizedException,
  type CanActivate,
  type ExecutionContext,
} from '@nestjs/common';
import { createHash, timingSafeEqual } from 'node:crypto';
import { OptionsValidator } from '../../src/index.js';
import { SampleSessionModule, SampleSessionStore } from '../auth/sample-session.store.js';
import { SignInRequired } from './sign-in-required.filter.js';

/** Who may use the admin API and the dashboard, besides signed-in users. */
export interface SampleAdminConfig {
  /** `ADMIN_TOKEN`: scripts send `Authorization: Bearer <token>`. Undefined: only signed-in sessions. */
  readonly token: string | undefined;
}

export const SAMPLE_ADMIN_CONFIG = Symbol('SAMPLE_ADMIN_CONFIG');

/** Reads `ADMIN_TOKEN`; one too short to be a secret fails the start. */
export function adminConfigFromEnv(env: NodeJS.ProcessEnv = process.env): SampleAdminConfig {
  const token = env.ADMIN_TOKEN === '' ? undefined : env.ADMIN_TOKEN;
  const v = new OptionsValidator('env');
  if (token !== undefined && token.length < 16) v.add('ADMIN_TOKEN', '[redacted]', 'must be at least 16 characters');
  v.throwIfInvalid('Invalid sample settings');
  return { token };
}

interface AdminRequest {
  method?: string;
  url?: string;
  originalUrl?: string;
  headers: { cookie?: string; authorization?: string; accept?: string };
}

const digest = (value: string) => createHash('sha256').update(value).digest();

/**
 * The guard of the admin API, the dashboard and `POST /admin/reload`: a signed-in session (the sample's
 * `/auth/login`) or `Authorization: Bearer <ADMIN_TOKEN>` when that variable is set. A browser asking for a
 * page without either is sent to sign in (and back); anything else gets 401.
 */
@Injectable()
export class SampleAdminGuard implements CanActivate {
  private readonly token: Buffer | undefined;

  constructor(
    private readonly sessions: SampleSessionStore,
    @Inject(SAMPLE_ADMIN_CONFIG) config: SampleAdminConfig,
  ) {
    this.token = config.token === undefined ? undefined : digest(config.token);
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (context.getType() !== 'http') return false;
    const request = context.switchToHttp().getRequest<AdminRequest>();
    const bearer = /^Bearer\s+(\S+)$/i.exec(request.headers.authorization ?? '')?.[1];
    if (bearer !== undefined) {
      if (this.token && timingSafeEqual(digest(bearer), this.token)) return true;
      throw unauthorized();
    }
    if (await this.sessions.fromRequest(request)) return true;
    const path = request.originalUrl ?? request.url ?? '/';
    if (request.method === 'GET' && /\btext\/html\b/.test(request.headers.accept ?? '')) throw new SignInRequired(path);
    throw unauthorized();
  }
}

function unauthorized(): UnauthorizedException {
  return new UnauthorizedException({
    statusCode: 401,
    error: 'unauthorized',
    message: 'Sign in at /auth/login, or send Authorization: Bearer <ADMIN_TOKEN>.',
  });
}

/** The guard with what it reads: the sessions and `ADMIN_TOKEN`. */
@Module({
  imports: [SampleSessionModule],
  providers: [{ provide: SAMPLE_ADMIN_CONFIG, useFactory: () => adminConfigFromEnv() }, SampleAdminGuard],
  exports: [SampleSessionModule, SAMPLE_ADMIN_CONFIG, SampleAdminGuard],
})
export class SampleAdminAccessModule {}
