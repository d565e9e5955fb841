import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { INestApplication } from '@nestjs/common';
import { join, resolve } from 'node:path';
import request from 'supertest';
import type { App } from 'supertest/types.js';
import {
  CIRCUIT_BREAKER_STATE_STORE,
  InMemoryCircuitBreakerStateStore,
  ResiliencePipelineRegistry,
} from '../../src/index.js';
import { RedisCircuitBreakerStateStore } from '../../src/redis/index.js';
import { projectRoot, resilienceFilePath } from '../../sample-app/config/resilience-file.loader.js';
import { ResilienceConfigReloader } from '../../sample-app/config/resilience-reload.service.js';
import { pipelineRows, startupText, table } from '../../sample-app/startup/startup.banner.js';
import { SampleConfigFile, startSample, withoutRetryDelays } from './sample-app.fixture.js';

const root = resolve(import.meta.dirname, '../..');

describe('sample app: what it prints at start-up, with nothing configured', () => {
  let app: INestApplication<App>;
  let text: string;

  beforeAll(async () => {
    app = await startSample(undefined);
    text = startupText({
      url: 'http://127.0.0.1:3000',
      rpcPort: 3001,
      configFile: app.get(ResilienceConfigReloader).path,
      pipelines: pipelineRows(app.get(ResiliencePipelineRegistry)),
      adminToken: false,
      store: 'memory',
      pid: 4242,
    });
  });

  afterAll(async () => {
    await app.close();
  });

  it('lists the URLs to open: app, dashboard, sign-in, health, metrics and the tour', () => {
    for (const url of [
      'http://127.0.0.1:3000/',
      'http://127.0.0.1:3000/resilience/dashboard',
      'http://127.0.0.1:3000/auth/login?returnTo=/resilience/dashboard',
      'http://127.0.0.1:3000/health',
      'http://127.0.0.1:3000/metrics',
      'http://127.0.0.1:3000/weather/lisbon',
      'http://127.0.0.1:3000/weather/atlantis/strict',
      'http://127.0.0.1:3000/weather/lisbon/limited',
      'http://127.0.0.1:3000/gateway/forecast/porto',
      'http://127.0.0.1:3000/rpc/weather/lisbon',
    ]) {
      expect(text.split('\n').some((line) => line.endsWith(` ${url}`))).toBe(true);
    }
    expect(text).toContain('RPC client (TCP :3001)');
    expect(text).toContain('kill -HUP 4242, or POST http://127.0.0.1:3000/admin/reload');
    expect(text).toContain('(store: memory)');
  });

  it('shows each pipeline of the file with its strategies, outermost first, in an aligned table', () => {
    const lines = text.split('\n');
    const row = (name: string) => lines.find((l) => l.startsWith(`${name} `));
    expect(row('weather')).toMatch(/^weather +retry → circuit-breaker → timeout$/);
    expect(row('gateway')).toMatch(/^gateway +timeout → rate-limiter → retry → circuit-breaker → timeout$/);
    expect(row('catalog')).toMatch(/^catalog +hedging$/);
    expect(row('rpcWeather')).toMatch(/^rpcWeather +timeout → retry → circuit-breaker → timeout$/);
    const header = lines.findIndex((l) => l.startsWith('pipeline '));
    const column = lines[header].indexOf('strategies');
    for (const name of ['weather', 'weatherPerUser', 'gateway', 'upstreamStatus', 'catalog', 'rpcWeather']) {
      // The name, padded to the column; the strategies start in it.
      expect(row(name)!.slice(0, column).trimEnd()).toBe(name);
      expect(row(name)![column]).toMatch(/[a-z]/);
    }
  });

  it('pads every column to its widest cell', () => {
    expect(
      table(
        ['a', 'bb'],
        [
          ['long cell', 'x'],
          ['s', 'yy'],
        ],
      ).split('\n'),
    ).toEqual(['a          bb', '---------  --', 'long cell  x', 's          yy']);
  });

  it('reads the default file of the project, from the sources as from dist/, and keeps circuits in memory', () => {
    expect(app.get(ResilienceConfigReloader).path).toBe(join(root, 'sample-app', 'config', 'resilience.yaml'));
    expect(resilienceFilePath({})).toBe(join(root, 'sample-app', 'config', 'resilience.yaml'));
    expect(projectRoot(join(root, 'dist', 'sample-app', 'config'))).toBe(root);
    expect(resilienceFilePath({ RESILIENCE_CONFIG: 'conf/other.yaml' })).toBe(
      resolve(process.cwd(), 'conf/other.yaml'),
    );
    expect(resilienceFilePath({ RESILIENCE_CONFIG: '/etc/sample.yaml' })).toBe('/etc/sample.yaml');
    expect(app.get(CIRCUIT_BREAKER_STATE_STORE)).toBeInstanceOf(InMemoryCircuitBreakerStateStore);
  });

  it('serves a home page with the links of the tour', async () => {
    const res = await request(app.getHttpServer()).get('/').expect(200);
    expect(res.headers['content-type']).toMatch(/text\/html/);
    for (const path of ['/resilience/dashboard', '/health', '/metrics', '/weather/lisbon/limited', '/catalog/1']) {
      expect(res.text).toContain(`href="${path}"`);
    }
  });
});

describe('sample app: REDIS_URL moves circuits to Redis, with no code change', () => {
  const config = new SampleConfigFile((doc) => {
    withoutRetryDelays(doc);
    doc.pipelines.weather.circuitBreaker = { ...(doc.pipelines.weather.circuitBreaker as object), failureThreshold: 2 };
  });
  const env = { REDIS_URL: process.env.REDIS_URL, REDIS_KEY_PREFIX: `sample-startup-${process.pid}-${Date.now()}` };
  let apps: INestApplication<App>[] = [];

  beforeAll(async () => {
    apps = [await startSample(config, { env }), await startSample(config, { env })];
  });

  afterAll(async () => {
    await Promise.all(apps.map((a) => a.close()));
    config.dispose();
  });

  it('shares the weather circuit between two instances: opened on one, open on the other', async () => {
    expect(apps[0].get(CIRCUIT_BREAKER_STATE_STORE)).toBeInstanceOf(RedisCircuitBreakerStateStore);
    const [a, b] = apps.map((app) => app.getHttpServer());
    await request(b).get('/health').expect(200);
    await request(a).get('/weather/atlantis/strict').expect(503);
    const health = await request(b).get('/health').expect(503);
    expect(health.body.error.resilience.circuits.weather).toMatchObject({ state: 'open' });
    await request(b).get('/weather/lisbon/strict').expect(503);
  });
});
