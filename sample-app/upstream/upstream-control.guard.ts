import { Inject, Injectable, Optional, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { firstValueFrom, isObservable } from 'rxjs';

/**
 * DI token of the guard that protects the upstreams' control route. Bind it to the admin API's guard
 * (`{ provide: UPSTREAM_CONTROL_GUARD, useExisting: TheAdminGuard }`) so the same people may switch the
 * upstreams as may drive the circuits; while it is not bound, the route is open (a demo on loopback).
 */
export const UPSTREAM_CONTROL_GUARD = Symbol('UPSTREAM_CONTROL_GUARD');

/** Delegates to the guard bound to `UPSTREAM_CONTROL_GUARD`; allows every request when none is. */
@Injectable()
export class UpstreamControlGuard implements CanActivate {
  constructor(@Optional() @Inject(UPSTREAM_CONTROL_GUARD) private readonly delegate?: CanActivate) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (!this.delegate) return true;
    const allowed = this.delegate.canActivate(context);
    return isObservable(allowed) ? firstValueFrom(allowed) : allowed;
  }
}
