import type { Cluster, Redis } from 'ioredis';
import type { PendingAuthorization, PendingAuthorizationStore } from '../oauth/pending-authorization.store.js';

/**
 * Pending authorizations in Redis, so a login started on one instance completes on another. `take` is
 * one `GETDEL`: atomic and single-use across every instance. Entries expire with their TTL.
 *
 * @publicApi
 */
export class RedisPendingAuthorizationStore implements PendingAuthorizationStore {
  private readonly prefix: string;

  constructor(
    private readonly client: Redis | Cluster,
    options: { keyPrefix?: string } = {},
  ) {
    this.prefix = `${options.keyPrefix ?? 'nest-resilience'}:oauth:pending:`;
  }

  async save(state: string, entry: PendingAuthorization, ttl: number): Promise<void> {
    await this.client.set(this.prefix + state, JSON.stringify(entry), 'PX', Math.max(1, Math.ceil(ttl)));
  }

  async take(state: string): Promise<PendingAuthorization | undefined> {
    const raw = await this.client.getdel(this.prefix + state);
    return raw === null ? undefined : (JSON.parse(raw) as PendingAuthorization);
  }
}
