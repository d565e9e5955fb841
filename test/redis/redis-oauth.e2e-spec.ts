import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Redis } from 'ioredis';
import { OAuthClient } from '../../src/oauth/index.js';
import { RedisPendingAuthorizationStore } from '../../src/redis/index.js';
import { TestIdentityProvider } from '../utils/identity-provider.js';
import { ready, redisClient, uniquePrefix } from './redis-test.utils.js';

const REDIRECT_URI = 'http://127.0.0.1:59998/auth/callback';

describe('OAuth logins across instances (Redis pending store)', () => {
  const idp = new TestIdentityProvider(REDIRECT_URI);
  const clients: Redis[] = [];

  beforeAll(async () => {
    await idp.start();
    for (let i = 0; i < 2; i++) clients.push(redisClient());
    await Promise.all(clients.map(ready));
  });

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.quit()));
    await idp.stop();
  });

  it('completes on one instance a login started on another, exactly once', async () => {
    const keyPrefix = uniquePrefix('oauth-fleet');
    const [a, b] = clients.map(
      (client) =>
        new OAuthClient({
          issuer: idp.issuer,
          clientId: idp.clientId,
          clientSecret: idp.clientSecret,
          redirectUri: REDIRECT_URI,
          allowInsecureRequests: true,
          tokenEndpoint: idp.gatewayUrl,
          pendingStore: new RedisPendingAuthorizationStore(client, { keyPrefix }),
        }),
    );
    const login = await a.startLogin({ returnTo: '/dashboard' });
    const query = await idp.authorize(login.authorizationUrl, 'grace');
    const before = idp.tokenRequests;
    const results = await Promise.allSettled([
      b.completeLogin({ query, browserBinding: login.browserBinding }),
      a.completeLogin({ query, browserBinding: login.browserBinding }),
      b.completeLogin({ query, browserBinding: login.browserBinding }),
    ]);
    const done = results.filter((r) => r.status === 'fulfilled');
    expect(done).toHaveLength(1);
    expect((done[0] as PromiseFulfilledResult<{ claims: { sub?: string }; returnTo: string }>).value).toMatchObject({
      claims: { sub: 'grace' },
      returnTo: '/dashboard',
    });
    expect(idp.tokenRequests - before).toBe(1);
  });
});

describe('OAuthModule with the Redis store', () => {
  it('keeps pending logins in Redis, on the module connection', async () => {
    const { Test } = await import('@nestjs/testing');
    const { ResilienceModule } = await import('../../src/index.js');
    const { OAuthModule, OAuthClientService } = await import('../../src/nest/oauth/index.js');
    const moduleRef = await Test.createTestingModule({
      imports: [
        ResilienceModule.forRoot({
          store: { redis: { url: process.env.REDIS_URL, keyPrefix: uniquePrefix('oauth-module') } },
        }),
        OAuthModule.register({ issuer: 'https://idp.example', clientId: 'c', redirectUri: 'https://app.example/cb' }),
      ],
    }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    try {
      const service = app.get(OAuthClientService);
      expect((service as unknown as { store: unknown }).store).toBeInstanceOf(RedisPendingAuthorizationStore);
    } finally {
      await app.close();
    }
  });
});
