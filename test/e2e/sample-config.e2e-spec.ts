import 'reflect-metadata';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { INestApplication } from '@nestjs/common';
import request from 'supertest';
import type { App } from 'supertest/types.js';
import { ResiliencePipelineRegistry, ResilienceValidationError } from '../../src/index.js';
import { SAMPLE_ADMIN_CONFIG } from '../../sample-app/admin/sample-admin.guard.js';
import { FlakyUpstreamServer } from '../../sample-app/upstream/flaky-upstream.server.js';
import { LineLogger } from '../utils/line.logger.js';
import { SampleConfigFile, startSample, withoutRetryDelays, type ResilienceDocument } from './sample-app.fixture.js';
import { SampleBuild } from './sample-cluster.fixture.js';
import { SampleProcess } from './sample-process.fixture.js';
import { freePort } from './sample-tour.browser.js';

const TOKEN = 'a-test-admin-token-for-scripts';

/** The weather pipeline: no retry delay, `retries` retries, a circuit that opens after `threshold` failures. */
function weather(retries: number, threshold: number) {
  return (doc: ResilienceDocument) => {
    withoutRetryDelays(doc);
    doc.pipelines.weather.retry = { ...(doc.pipelines.weather.retry as object), maxRetryAttempts: retries };
    doc.pipelines.weather.circuitBreaker = {
      ...(doc.pipelines.weather.circuitBreaker as object),
      failureThreshold: threshold,
      breakDuration: '1m',
    };
  };
}

async function startFailure(config: SampleConfigFile): Promise<Error> {
  const error = await startSample(config).then(
    async (app) => {
      await app.close();
      return undefined;
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ResilienceValidationError);
  return error as Error;
}

describe('sample app: the resilience file at start-up', () => {
  it('builds every pipeline of the file, in the order its sections compose', async () => {
    const app = await startSample(undefined);
    try {
      const registry = app.get(ResiliencePipelineRegistry);
      const types = (name: string) =>
        registry
          .getPipeline(name)
          .describe()
          .map((s) => s.type);
      expect(registry.pipelineNames).toEqual(
        expect.arrayContaining(['weather', 'weatherPerUser', 'gateway', 'upstreamStatus', 'catalog', 'rpcWeather']),
      );
      expect(types('weather')).toEqual(['retry', 'circuit-breaker', 'timeout']);
      expect(types('gateway')).toEqual(['timeout', 'rate-limiter', 'retry', 'circuit-breaker', 'timeout']);
      expect(types('catalog')).toEqual(['hedging']);
      expect(types('weatherPerUser')).toEqual(['rate-limiter']);
      expect(registry.getPipelineConfig('weather')?.circuitBreaker).toMatchObject({ breakDuration: 10_000 });
      expect(registry.getPipelineConfig('catalog')?.hedging).toMatchObject({ maxHedgedAttempts: 1, delay: 100 });
    } finally {
      await app.close();
    }
  });

  it('refuses to start with an invalid file: one ResilienceValidationError lists every problem', async () => {
    const config = new SampleConfigFile((doc) => {
      doc.pipelines.weather.retry = { ...(doc.pipelines.weather.retry as object), maxRetryAttempts: -1 };
      doc.pipelines.weather.circuitBreaker = {
        ...(doc.pipelines.weather.circuitBreaker as object),
        breakDuration: 'soon',
      };
      (doc.pipelines.weatherPerUser.rateLimiter as Record<string, unknown>).partitionBy = 'tenant';
      doc.pipelines.gateway.retri = {};
      doc.oauth!.tokenRequests!.retries = 'many';
      doc.pipeline = {};
    });
    try {
      const error = await startFailure(config);
      expect(error.message).toContain(`Invalid resilience configuration in ${config.path} (6 problems)`);
      expect(error.message).toContain('pipelines.weather.retry.maxRetryAttempts: -1 must be');
      expect(error.message).toContain('pipelines.weather.circuitBreaker.breakDuration: "soon"');
      expect(error.message).toContain('pipelines.weatherPerUser.rateLimiter.partitionBy: "tenant" must be one of');
      expect(error.message).toMatch(/pipelines\.gateway\.retri: \{\} is not a known option \(did you mean "retry"/);
      expect(error.message).toContain('oauth.tokenRequests.retries: "many" must be a whole number >= 0');
      expect(error.message).toMatch(/pipeline: \{\} is not a known option \(did you mean "pipelines"/);
    } finally {
      config.dispose();
    }
  });

  it('names the line of a YAML syntax error, and a file that cannot be read', async () => {
    const config = new SampleConfigFile();
    try {
      config.writeText('pipelines:\n  weather:\n    retry: [unclosed\n');
      expect((await startFailure(config)).message).toMatch(/file: ".*resilience\.yaml" is not valid YAML at line \d/);
      config.dispose();
      expect((await startFailure(config)).message).toMatch(/file: ".*resilience\.yaml" cannot be read \(ENOENT\)/);
    } finally {
      config.dispose();
    }
  });
});

describe('sample app: reloading the resilience file (POST /admin/reload, the SIGHUP listener)', () => {
  const lines = new LineLogger();
  const config = new SampleConfigFile(weather(3, 2));
  let app: INestApplication<App>;
  let server: App;
  let upstream: FlakyUpstreamServer;
  let registry: ResiliencePipelineRegistry;
  const listenersBefore = process.listenerCount('SIGHUP');

  beforeAll(async () => {
    app = await startSample(config, {
      logger: lines,
      override: (b) => b.overrideProvider(SAMPLE_ADMIN_CONFIG).useValue({ token: TOKEN }),
    });
    server = app.getHttpServer();
    upstream = app.get(FlakyUpstreamServer);
    registry = app.get(ResiliencePipelineRegistry);
  });

  afterAll(async () => {
    await app.close();
    config.dispose();
  });

  /** Upstream calls one strict request for Atlantis (which always fails) makes. */
  async function atlantisCalls(status: number): Promise<number> {
    const before = upstream.requestCount;
    await request(server).get('/weather/atlantis/strict').expect(status);
    return upstream.requestCount - before;
  }

  it('listens for SIGHUP while running', () => {
    expect(process.listenerCount('SIGHUP')).toBe(listenersBefore + 1);
  });

  it('applies it on POST /admin/reload and answers with what changed', async () => {
    config.write((doc) => {
      weather(2, 10)(doc);
      doc.pipelines.extra = { timeout: '1s' };
      doc.oauth!.tokenRequests!.retries = 4;
    });
    await request(server).post('/admin/reload').expect(401);
    const res = await request(server).post('/admin/reload').set('Authorization', `Bearer ${TOKEN}`).expect(200);
    expect(res.body).toEqual({
      file: 'resilience.yaml',
      reloaded: ['weather'],
      added: ['extra'],
      unchanged: expect.arrayContaining(['gateway', 'catalog', 'rpcWeather', 'upstreamStatus', 'weatherPerUser']),
      removed: [],
      restartRequired: ['oauth.tokenRequests'],
    });
    expect(await atlantisCalls(500)).toBe(3);
    expect(
      registry
        .getPipeline('extra')
        .describe()
        .map((s) => s.type),
    ).toEqual(['timeout']);

    // The same file again: nothing changes; a pipeline taken out of the file keeps running until restart.
    config.write((doc) => {
      weather(2, 10)(doc);
      doc.oauth!.tokenRequests!.retries = 4;
    });
    const again = await request(server).post('/admin/reload').set('Authorization', `Bearer ${TOKEN}`).expect(200);
    expect(again.body).toMatchObject({ reloaded: [], added: [], removed: ['extra'] });
    expect(registry.pipelineNames).toContain('extra');
  });

  it('refuses an invalid file with its problems, answered and logged; the running pipelines stay', async () => {
    config.write((doc) => {
      weather(0, 10)(doc);
      doc.pipelines.weather.timeout = 'never';
      doc.pipelines.gateway.retry = { maxRetryAttempts: -2 };
    });
    const refused = await request(server).post('/admin/reload').set('Authorization', `Bearer ${TOKEN}`).expect(422);
    expect(refused.body).toMatchObject({ statusCode: 422, error: 'invalid_configuration' });
    expect(refused.body.problems).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ path: 'pipelines.weather.timeout.timeout' }),
        expect.objectContaining({ path: 'pipelines.gateway.retry.maxRetryAttempts' }),
      ]),
    );
    expect(JSON.stringify(refused.body)).not.toContain(config.path);
    const logged = lines.lines.filter((l) => l.text.startsWith('SAMPLE_CONFIG_RELOAD_REJECTED'));
    expect(logged.at(-1)).toMatchObject({ level: 'error' });
    expect(logged.at(-1)!.text).toContain('pipelines.weather.timeout.timeout: "never"');

    // Still two retries (the last valid file), not none.
    expect(registry.getPipelineConfig('weather')?.retry?.maxRetryAttempts).toBe(2);
    expect(await atlantisCalls(500)).toBe(3);
  });

  it('stops listening for SIGHUP when the application closes', async () => {
    const other = await startSample(undefined);
    expect(process.listenerCount('SIGHUP')).toBe(listenersBefore + 2);
    await other.close();
    expect(process.listenerCount('SIGHUP')).toBe(listenersBefore + 1);
  });
});

describe('sample app as a process: kill -HUP reloads the file and the app keeps serving; SIGTERM stops it', () => {
  const config = new SampleConfigFile(weather(3, 2));
  let build: SampleBuild | undefined;
  let sample: SampleProcess | undefined;

  beforeAll(async () => {
    // The sample compiled as `npm run build` compiles it, into a folder of its own (dist/ may be rebuilt
    // by another suite meanwhile). One compilation: a generous budget for a busy machine.
    build = await SampleBuild.compile();
  }, 300_000);

  afterEach(async () => {
    await sample?.kill();
  });

  afterAll(() => {
    build?.dispose();
    config.dispose();
  });

  it('applies a changed file on SIGHUP (an open circuit stays open), logs an invalid one, and exits 0 on SIGTERM', async () => {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    sample = new SampleProcess(build!, {
      PORT: String(port),
      RPC_PORT: String(await freePort()),
      RESILIENCE_CONFIG: config.path,
      ADMIN_TOKEN: TOKEN,
      REDIS_URL: undefined,
      OIDC_PORT: undefined,
      LOG_LEVEL: undefined,
    });
    const admin = { authorization: `Bearer ${TOKEN}` };
    const get = (path: string) => fetch(`${base}${path}`, { headers: admin });
    const upstreamRequests = async () =>
      ((await (await get('/upstreams/weather')).json()) as { requests: number }).requests;
    const atlantisCalls = async (status: number) => {
      const before = await upstreamRequests();
      const res = await fetch(`${base}/weather/atlantis/strict`);
      await res.arrayBuffer();
      expect(res.status).toBe(status);
      return (await upstreamRequests()) - before;
    };

    // The pid it prints at start is the one to signal.
    const printed = await sample.output(/kill -HUP (\d+)/);
    expect(Number(printed[1])).toBe(sample.pid);

    // Two failures in a row open the circuit (threshold 2): the call's second attempt, the third is rejected.
    expect(await atlantisCalls(503)).toBe(2);

    config.write(weather(1, 10));
    let mark = sample.text.length;
    process.kill(sample.pid, 'SIGHUP');
    await sample.output(/SAMPLE_CONFIG_RELOADED from resilience\.yaml: reloaded \[weather\]/, mark);

    // Still running and serving; the open circuit stayed open through the reload.
    expect(sample.running).toBe(true);
    const health = await fetch(`${base}/health`);
    expect(health.status).toBe(503);
    expect(await health.json()).toMatchObject({
      error: { resilience: { circuits: { weather: { state: 'open' } } } },
    });
    expect(await atlantisCalls(503)).toBe(0);
    expect(sample.running).toBe(true);
    // Closed, the circuit runs the new options: one retry (two calls), and 10 failures to open.
    expect((await fetch(`${base}/resilience/circuits/weather/close`, { method: 'POST', headers: admin })).status).toBe(
      200,
    );
    expect(await atlantisCalls(500)).toBe(2);

    // An invalid file changes nothing and logs every problem; the app keeps running.
    config.write((doc) => {
      weather(3, 10)(doc);
      doc.pipelines.weather.timeout = 'never';
      doc.pipelines.gateway.retry = { maxRetryAttempts: -2 };
    });
    mark = sample.text.length;
    process.kill(sample.pid, 'SIGHUP');
    await sample.output(/SAMPLE_CONFIG_RELOAD_REJECTED the running pipelines stay/, mark);
    await sample.output(/pipelines\.weather\.timeout\.timeout: "never"/, mark);
    await sample.output(/pipelines\.gateway\.retry\.maxRetryAttempts: -2/, mark);
    expect(sample.running).toBe(true);
    expect(await atlantisCalls(500)).toBe(2);

    // SIGTERM (and SIGINT) shut it down: a clean close, exit code 0.
    process.kill(sample.pid, 'SIGTERM');
    expect(await sample.exited).toEqual({ code: 0, signal: null });
  }, 120_000);
});
