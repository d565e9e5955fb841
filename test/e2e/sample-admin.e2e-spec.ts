import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import type { App } from 'supertest/types.js';
import { ResilienceValidationError } from '../../src/index.js';
import { adminConfigFromEnv, SAMPLE_ADMIN_CONFIG } from '../../sample-app/admin/sample-admin.guard.js';
import { signInUrl } from '../../sample-app/admin/sign-in-required.filter.js';
import { SampleConfigFile, signIn, startSample, withoutRetryDelays } from './sample-app.fixture.js';

const TOKEN = 'another-test-admin-token-0123';
const HTML = 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.8';

describe('sample app: the admin API and the dashboard, behind sign-in', () => {
  const config = new SampleConfigFile(withoutRetryDelays);
  let app: INestApplication<App>;
  let server: App;

  beforeAll(async () => {
    app = await startSample(config, {
      override: (b) => b.overrideProvider(SAMPLE_ADMIN_CONFIG).useValue({ token: TOKEN }),
    });
    server = app.getHttpServer();
  });

  afterAll(async () => {
    await app.close();
    config.dispose();
  });

  it('sends a browser that is not signed in to sign in, and back to the dashboard', async () => {
    const res = await request(server).get('/resilience/dashboard').set('Accept', HTML).expect(302);
    expect(res.headers.location).toBe('/auth/login?returnTo=/resilience/dashboard');
    expect(res.headers['cache-control']).toBe('no-store');

    const { cookie, location } = await signIn(server, 'ada', '/resilience/dashboard');
    expect(location).toBe('/resilience/dashboard');
    const page = await request(server).get(location).set('Accept', HTML).set('Cookie', cookie).expect(200);
    expect(page.headers['content-type']).toMatch(/text\/html/);
    const circuits = await request(server).get('/resilience/circuits').set('Cookie', cookie).expect(200);
    expect(Array.isArray(circuits.body)).toBe(true);
  });

  it('answers an API call without sign-in or token with 401 JSON, also with a wrong token', async () => {
    for (const call of [
      request(server).get('/resilience/circuits'),
      request(server).get('/resilience/pipelines').set('Authorization', 'Bearer not-the-admin-token'),
      request(server).get('/resilience/dashboard').set('Accept', HTML).set('Authorization', 'Bearer wrong'),
      request(server).post('/resilience/circuits/weather/isolate'),
      request(server).get('/resilience/circuits').set('Cookie', 'nr_session=forged'),
    ]) {
      const res = await call.expect(401);
      expect(res.headers['content-type']).toMatch(/application\/json/);
      expect(res.body).toMatchObject({ statusCode: 401, error: 'unauthorized' });
    }
  });

  it('lets a script in with Authorization: Bearer <ADMIN_TOKEN>: isolate a circuit, see it, close it', async () => {
    const auth = { Authorization: `Bearer ${TOKEN}` };
    const pipelines = await request(server).get('/resilience/pipelines').set(auth).expect(200);
    const weather = (pipelines.body as { name: string; strategies: { type: string }[] }[]).find(
      (p) => p.name === 'weather',
    );
    expect(weather?.strategies.map((s) => s.type)).toEqual(['retry', 'circuit-breaker', 'timeout']);
    await request(server).post('/resilience/circuits/weather/isolate').set(auth).expect(200);
    const rejected = await request(server).get('/weather/lisbon/strict').expect(503);
    expect(rejected.body.message).not.toContain('127.0.0.1');
    const health = await request(server).get('/health').expect(503);
    expect(health.body.error.resilience.circuits.weather).toMatchObject({ status: 'down', state: 'isolated' });
    await request(server).post('/resilience/circuits/weather/close').set(auth).expect(200);
    await request(server).get('/weather/lisbon/strict').expect(200);
  });

  it('keeps returnTo local, and refuses an ADMIN_TOKEN too short to be a secret', () => {
    expect(signInUrl('/resilience/dashboard?tab=circuits')).toBe(
      '/auth/login?returnTo=/resilience/dashboard%3Ftab%3Dcircuits',
    );
    expect(signInUrl('//evil.example/')).toBe('/auth/login');
    expect(signInUrl('https://evil.example/')).toBe('/auth/login');
    expect(() => adminConfigFromEnv({ ADMIN_TOKEN: 'short' })).toThrow(ResilienceValidationError);
    expect(() => adminConfigFromEnv({ ADMIN_TOKEN: 'short' })).toThrow(
      'env.ADMIN_TOKEN: "[redacted]" must be at least 16 characters',
    );
    expect(adminConfigFromEnv({})).toEqual({ token: undefined });
  });
});

describe('sample app: without ADMIN_TOKEN only a signed-in session opens the admin API', () => {
  let app: INestApplication<App>;

  beforeAll(async () => {
    app = await startSample(undefined, {
      override: (b) => b.overrideProvider(SAMPLE_ADMIN_CONFIG).useValue({ token: undefined }),
    });
  });

  afterAll(async () => {
    await app.close();
  });

  it('refuses every bearer token, and admits the session', async () => {
    const server = app.getHttpServer();
    await request(server).get('/resilience/circuits').set('Authorization', 'Bearer anything-at-all-here').expect(401);
    const { cookie } = await signIn(server, 'grace');
    await request(server).get('/resilience/circuits').set('Cookie', cookie).expect(200);
    await request(server).post('/admin/reload').set('Cookie', cookie).expect(200);
  });
});
