import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Redis } from 'ioredis';
import type { PendingAuthorization } from '../../src/oauth/index.js';
import { RedisPendingAuthorizationStore } from '../../src/redis/index.js';
import { ready, redisClient, uniquePrefix } from './redis-test.utils.js';

const entry: PendingAuthorization = {
  codeVerifier: 'verifier-0123456789',
  nonce: 'nonce-1',
  issuer: 'https://issuer.example',
  redirectUri: 'https://app.example/auth/callback',
  returnTo: '/orders?page=2',
  browserBinding: 'binding-hash',
  createdAt: 1_700_000_000_000,
  correlationId: 'login-7',
};

describe('Redis pending-authorization store', () => {
  let client: Redis;
  beforeAll(async () => {
    client = redisClient();
    await ready(client);
  });
  afterAll(async () => {
    await client.quit();
  });

  it('hands a saved login back exactly once, as it was saved, under the application prefix', async () => {
    const keyPrefix = uniquePrefix('pending');
    const store = new RedisPendingAuthorizationStore(client, { keyPrefix });
    await store.save('state-1', entry, 60_000);
    expect(await client.keys(`${keyPrefix}:*`)).toEqual([`${keyPrefix}:oauth:pending:state-1`]);
    const instance = new RedisPendingAuthorizationStore(client, { keyPrefix }); // another instance
    const taken = await Promise.all([instance.take('state-1'), store.take('state-1')]);
    expect(taken.filter((t) => t !== undefined)).toEqual([entry]);
    expect(await store.take('state-1')).toBeUndefined();
    expect(await store.take('never-saved')).toBeUndefined();
  });

  it('keys default to the nest-resilience prefix', async () => {
    const state = uniquePrefix('state');
    await new RedisPendingAuthorizationStore(client).save(state, entry, 60_000);
    expect(await client.exists(`nest-resilience:oauth:pending:${state}`)).toBe(1);
    expect(await new RedisPendingAuthorizationStore(client).take(state)).toEqual(entry);
  });

  it('lets an entry expire with its TTL, at least one millisecond', async () => {
    const keyPrefix = uniquePrefix('ttl');
    const store = new RedisPendingAuthorizationStore(client, { keyPrefix });
    await store.save('long', entry, 90_000.4);
    const ttl = await client.pttl(`${keyPrefix}:oauth:pending:long`);
    expect(ttl).toBeGreaterThan(80_000);
    expect(ttl).toBeLessThanOrEqual(90_001);
    await store.save('none', entry, 0);
    expect(await client.pttl(`${keyPrefix}:oauth:pending:none`)).toBeLessThanOrEqual(1);
  });
});
