import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import type { App } from 'supertest/types.js';
import { AppModule } from '../../sample-app/app.module.js';
import { SAMPLE_CONFIG, sampleConfigFromEnv } from '../../sample-app/config/sample.config.js';

/** Follows the built-in provider's login and consent pages like a browser (cookie jar, manual redirects). */
async function signInAtProvider(authorizationUrl: string, user: string): Promise<string> {
  const jar = new Map<string, string>();
  let url = authorizationUrl;
  for (let step = 0; step < 20; step++) {
    if (url.includes('/auth/callback')) return url;
    const send = (target: string, body?: URLSearchParams) =>
      fetch(target, {
        method: body ? 'POST' : 'GET',
        body,
        redirect: 'manual',
        headers: { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') },
      }).then((response) => {
        for (const set of response.headers.getSetCookie()) {
          const pair = set.split(';')[0];
          const i = pair.indexOf('=');
          if (pair.slice(i + 1)) jar.set(pair.slice(0, i), pair.slice(i + 1));
          else jar.delete(pair.slice(0, i));
        }
        return response;
      });
    let response = await send(url);
    if (response.status === 200) {
      const page = await response.text();
      const action = new URL(/action="([^"]+)"/.exec(page)![1], url).href;
      const prompt = /name="prompt" value="([^"]+)"/.exec(page)![1];
      response = await send(
        action,
        new URLSearchParams({ prompt, ...(prompt === 'login' ? { login: user, password: 'x' } : {}) }),
      );
    }
    url = new URL(response.headers.get('location')!, url).href;
  }
  throw new Error('too many redirects');
}

describe('sample app: sign-in with PKCE against the built-in identity provider', () => {
  let app: INestApplication<App>;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] })
      .overrideProvider(SAMPLE_CONFIG)
      .useValue({ ...sampleConfigFromEnv({}), weatherRetryDelay: 0 })
      .compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
  });

  afterAll(async () => {
    await app.close();
  });

  it('signs a user in, shows who is signed in, and signs out', async () => {
    const server = app.getHttpServer();
    const login = await request(server).get('/auth/login').expect(302);
    const binding = login.headers['set-cookie'] as unknown as string[];
    expect(binding[0]).toMatch(/^nr_oauth_binding=[^;]+; Path=\/; HttpOnly; SameSite=Lax/);
    expect(login.headers.location).toContain('code_challenge_method=S256');

    const callbackUrl = new URL(await signInAtProvider(login.headers.location, 'ada'));
    const callback = await request(server)
      .get(`/auth/callback${callbackUrl.search}`)
      .set('Cookie', binding[0].split(';')[0])
      .expect(302);
    expect(callback.headers.location).toBe('/auth/me');
    const session = (callback.headers['set-cookie'] as unknown as string[])
      .find((c) => c.startsWith('nr_session='))!
      .split(';')[0];

    const me = await request(server).get('/auth/me').set('Cookie', session).expect(200);
    expect(me.text).toContain('<strong id="user">ada</strong>');

    // Replaying the callback is refused with a stable code and no token request.
    const replay = await request(server)
      .get(`/auth/callback${callbackUrl.search}`)
      .set('Cookie', binding[0].split(';')[0])
      .expect(400);
    expect(replay.body).toMatchObject({ statusCode: 400, error: 'unknown_state' });

    const logout = await request(server).get('/auth/logout').set('Cookie', session).expect(302);
    expect(logout.headers.location).toContain('/session/end');
    await request(server)
      .get('/auth/me')
      .set('Cookie', session)
      .expect(200)
      .expect((r) => expect(r.text).toContain('Not signed in'));
  });

  it('refuses a callback from another browser, and an open redirect through returnTo', async () => {
    const server = app.getHttpServer();
    const login = await request(server).get('/auth/login').expect(302);
    const callbackUrl = new URL(await signInAtProvider(login.headers.location, 'eve'));
    const res = await request(server)
      .get(`/auth/callback${callbackUrl.search}`)
      .set('Cookie', 'nr_oauth_binding=forged')
      .expect(400);
    expect(res.body).toMatchObject({ error: 'browser_mismatch' });
    const redirect = await request(server).get('/auth/login?returnTo=https://evil.example/').expect(400);
    expect(redirect.body).toMatchObject({ error: 'invalid_return_to' });
  });
});
