import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import type { App } from 'supertest/types.js';
import { RESILIENCE_TIME_PROVIDER } from '../../src/index.js';
import { FakeTimeProvider } from '../../src/testing/index.js';
import { SampleConfigFile, signIn, startSample, withoutRetryDelays } from './sample-app.fixture.js';

describe('sample app: a rate limit per user (signed-in user, else client IP)', () => {
  const config = new SampleConfigFile(withoutRetryDelays);
  const time = new FakeTimeProvider(Date.UTC(2026, 0, 1));
  let app: INestApplication<App>;
  let server: App;

  beforeAll(async () => {
    app = await startSample(config, {
      override: (b) => b.overrideProvider(RESILIENCE_TIME_PROVIDER).useValue(time),
    });
    server = app.getHttpServer();
  });

  afterAll(async () => {
    await app.close();
    config.dispose();
  });

  /** `count` calls of the limited route, with this session cookie (or none): their statuses. */
  async function calls(count: number, cookie?: string): Promise<number[]> {
    const statuses: number[] = [];
    for (let i = 0; i < count; i++) {
      const call = request(server).get('/weather/lisbon/limited');
      statuses.push((await (cookie ? call.set('Cookie', cookie) : call)).status);
    }
    return statuses;
  }

  it('admits 5 calls per 10 s for each caller, answers 429 with Retry-After beyond, and admits again after the window', async () => {
    const ada = (await signIn(server, 'ada')).cookie;
    const grace = (await signIn(server, 'grace')).cookie;

    expect(await calls(5)).toEqual([200, 200, 200, 200, 200]);
    const limited = await request(server).get('/weather/lisbon/limited').expect(429);
    expect(limited.headers['retry-after']).toBe('10');
    expect(limited.body).toMatchObject({ statusCode: 429 });
    expect(JSON.stringify(limited.body)).not.toMatch(/127\.0\.0\.1|::ffff|ip:/);
    // The route without the limit still answers from the upstream.
    await request(server)
      .get('/weather/lisbon')
      .expect(200)
      .expect((r) => expect(r.body.source).toBe('live'));

    // Signed-in users have windows of their own, not the IP's they share.
    expect(await calls(6, ada)).toEqual([200, 200, 200, 200, 200, 429]);
    expect(await calls(1, grace)).toEqual([200]);
    const adaLimited = await request(server).get('/weather/lisbon/limited').set('Cookie', ada).expect(429);
    expect(JSON.stringify(adaLimited.body)).not.toContain('ada');

    time.advance(4_000);
    const later = await request(server).get('/weather/lisbon/limited').expect(429);
    expect(later.headers['retry-after']).toBe('6');
    time.advance(6_000);
    expect(await calls(1)).toEqual([200]);
    expect(await calls(1, ada)).toEqual([200]);
  });
});
