import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import request from 'supertest';
import type { App } from 'supertest/types.js';
import type { Redis } from 'ioredis';
import { OAuthClient } from '../../src/oauth/index.js';
import { RedisPendingAuthorizationStore } from '../../src/redis/index.js';
import { TestIdentityProvider } from '../utils/identity-provider.js';
import { LineLogger } from '../utils/line.logger.js';
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
        OAuthModule.register({
          issuer: 'https://idp.example',
          clientId: 'c',
          redirectUri: 'https://app.example/cb',
          deferDiscovery: true,
        }),
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

describe('sample app with REDIS_URL', () => {
  const idp = new TestIdentityProvider('http://127.0.0.1:59996/auth/callback');
  const apps: INestApplication<App>[] = [];
  let inspector: Redis;

  beforeAll(async () => {
    await idp.start();
    inspector = redisClient();
    await ready(inspector);
  });

  afterAll(async () => {
    await Promise.all(apps.map((a) => a.close()));
    await inspector.quit();
    await idp.stop();
  });

  async function sampleInstance(
    keyPrefix: string,
    options: { redisUrl?: string; logger?: LineLogger } = {},
  ): Promise<INestApplication<App>> {
    const { AppModule } = await import('../../sample-app/app.module.js');
    const { oauthConfigFromEnv, SAMPLE_OAUTH_CONFIG } = await import('../../sample-app/config/oauth.config.js');
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] })
      .overrideProvider(SAMPLE_OAUTH_CONFIG)
      .useValue(
        oauthConfigFromEnv({
          OIDC_ISSUER: idp.issuer,
          OIDC_CLIENT_ID: idp.clientId,
          OIDC_CLIENT_SECRET: idp.clientSecret,
          OIDC_REDIRECT_URI: idp.redirectUri,
          OIDC_ALLOW_HTTP: 'true',
          OIDC_TOKEN_ENDPOINT: idp.gatewayUrl,
          REDIS_URL: options.redisUrl ?? process.env.REDIS_URL!,
          REDIS_KEY_PREFIX: keyPrefix,
        }),
      )
      .compile();
    const app = moduleRef.createNestApplication<INestApplication<App>>({ logger: options.logger ?? false });
    await app.init();
    apps.push(app);
    return app;
  }

  it('keeps the circuit store and the pending logins in Redis: a login started on one instance completes on another', async () => {
    const keyPrefix = uniquePrefix('sample');
    const [a, b] = [await sampleInstance(keyPrefix), await sampleInstance(keyPrefix)];
    const { OAuthClientService } = await import('../../src/nest/oauth/index.js');
    for (const app of [a, b]) {
      const service: unknown = app.get(OAuthClientService);
      expect((service as { store: unknown }).store).toBeInstanceOf(RedisPendingAuthorizationStore);
    }
    const login = await request(a.getHttpServer()).get('/auth/login').expect(302);
    const binding = (login.headers['set-cookie'] as unknown as string[])[0].split(';')[0];
    const state = new URL(login.headers.location).searchParams.get('state')!;
    expect(await inspector.exists(`${keyPrefix}:oauth:{pending}:state:${state}`)).toBe(1);
    const query = await idp.authorize(login.headers.location, 'linus');
    const before = idp.tokenRequests;
    const callback = await request(b.getHttpServer())
      .get(`/auth/callback?${query.toString()}`)
      .set('Cookie', binding)
      .expect(303);
    expect(idp.tokenRequests - before).toBe(1);
    expect(await inspector.exists(`${keyPrefix}:oauth:{pending}:state:${state}`)).toBe(0);
    // The same callback on the first instance: the login is spent everywhere.
    await request(a.getHttpServer()).get(`/auth/callback?${query.toString()}`).set('Cookie', binding).expect(400);
    const session = (callback.headers['set-cookie'] as unknown as string[]).find((c) => c.startsWith('nr_session='))!;
    const me = await request(b.getHttpServer()).get('/auth/me').set('Cookie', session.split(';')[0]).expect(200);
    expect(me.text).toContain('<strong id="user">linus</strong>');
  });

  it('keeps sessions in the same Redis: signed in through B, signed in on A; signed out on B, signed out on A', async () => {
    const keyPrefix = uniquePrefix('sessions');
    const [a, b] = [await sampleInstance(keyPrefix), await sampleInstance(keyPrefix)];
    const login = await request(a.getHttpServer()).get('/auth/login?returnTo=%2Fauth%2Fme').expect(302);
    const binding = (login.headers['set-cookie'] as unknown as string[])[0].split(';')[0];
    const query = await idp.authorize(login.headers.location, 'ada');
    const callback = await request(b.getHttpServer())
      .get(`/auth/callback?${query.toString()}`)
      .set('Cookie', binding)
      .expect(303);
    const session = (callback.headers['set-cookie'] as unknown as string[])
      .find((c) => c.startsWith('nr_session='))!
      .split(';')[0];
    const onA = await request(a.getHttpServer()).get('/auth/me').set('Cookie', session).expect(200);
    expect(onA.text).toContain('<strong id="user">ada</strong>');
    // A refresh through A is seen by B (the rotated refresh token is the session's everywhere).
    await request(a.getHttpServer()).post('/auth/refresh').set('Cookie', session).expect(200);
    await request(b.getHttpServer()).post('/auth/refresh').set('Cookie', session).expect(200);
    await request(b.getHttpServer()).get('/auth/logout').set('Cookie', session).expect(302);
    const after = await request(a.getHttpServer()).get('/auth/me').set('Cookie', session).expect(200);
    expect(after.text).toContain('Not signed in');
    expect(await inspector.keys(`${keyPrefix}:sample:session:*`)).toEqual([]);
  });

  it('answers 503 store_unavailable (Retry-After) on login start and callback while Redis is down, logged once with its code', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const lines = new LineLogger();
    const app = await sampleInstance(uniquePrefix('down'), { redisUrl: `redis://127.0.0.1:${port}`, logger: lines });
    const server = app.getHttpServer();
    for (let i = 0; i < 3; i++) {
      const res = await request(server).get('/auth/login').expect(503);
      expect(res.body).toMatchObject({ error: 'store_unavailable' });
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
      expect(res.headers['cache-control']).toBe('no-store');
    }
    const query = new URLSearchParams({ code: 'c', state: 's'.repeat(43), iss: idp.issuer });
    const callback = await request(server)
      .get(`/auth/callback?${query.toString()}`)
      .set('Cookie', `nr_oauth_binding=${'b'.repeat(43)}`)
      .expect(503);
    expect(callback.body).toMatchObject({ error: 'store_unavailable' });
    const page = await request(server)
      .get(`/auth/callback?${query.toString()}`)
      .set('Cookie', `nr_oauth_binding=${'b'.repeat(43)}`)
      .set('Accept', 'text/html')
      .expect(503);
    expect(page.text).toContain('href="/auth/login?returnTo=/auth/me"');
    expect(lines.lines.filter((l) => l.code === 'OAUTH_STORE_UNAVAILABLE')).toEqual([
      expect.objectContaining({ level: 'error' }),
    ]);
    // Nothing was kept in memory instead.
    const service: unknown = app.get((await import('../../src/nest/oauth/index.js')).OAuthClientService);
    expect((service as { store: unknown }).store).toBeInstanceOf(RedisPendingAuthorizationStore);
  });
});
