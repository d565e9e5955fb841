import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import {
  ClusterProcess,
  consecutiveFreePorts,
  eventually,
  isRunning,
  processesMentioning,
  SampleBuild,
  type FleetInstance,
} from './sample-cluster.fixture.js';

// `npm run start:cluster` (scripts/start-cluster.mjs) with --no-build, running a build of the sample of
// this test's own (never dist/, which `npm pack` rebuilds meanwhile).
const ADMIN_TOKEN = randomBytes(24).toString('base64url');
const auth = { authorization: `Bearer ${ADMIN_TOKEN}` };
const START = 180_000;

interface Circuit {
  pipelineName: string;
  state: string;
}
interface HealthBody {
  status: string;
  error?: { resilience?: { circuits?: Record<string, { state: string; status: string }> } };
}

let build: SampleBuild;
/** The sample's entry, by a path of this file's own (other files run the shared build at the same time). */
let sampleEntry: string;

beforeAll(async () => {
  build = await SampleBuild.compile();
  sampleEntry = build.ownEntry();
}, START);

afterAll(() => build?.dispose());

async function weatherCircuit(instance: FleetInstance): Promise<Circuit> {
  const response = await fetch(`${instance.url}/resilience/circuits`, { headers: auth });
  expect(response.status).toBe(200);
  const circuits = (await response.json()) as Circuit[];
  const weather = circuits.find((c) => c.pipelineName === 'weather');
  if (!weather) throw new Error(`no weather circuit in ${JSON.stringify(circuits)}`);
  return weather;
}

async function health(instance: FleetInstance): Promise<{ status: number; body: HealthBody }> {
  const response = await fetch(`${instance.url}/health`);
  return { status: response.status, body: (await response.json()) as HealthBody };
}

async function weatherRequests(instance: FleetInstance): Promise<number> {
  const response = await fetch(`${instance.url}/upstreams/weather`, { headers: auth });
  expect(response.status).toBe(200);
  return ((await response.json()) as { requests: number }).requests;
}

/** Waits until `instance` reports the weather circuit in `state`. */
const circuitBecomes = (instance: FleetInstance, state: string) =>
  eventually(
    async () => ((await weatherCircuit(instance)).state === state ? true : undefined),
    `${state} on ${instance.port}`,
  );

describe('npm run start:cluster: three instances on the test run’s Redis', () => {
  const keyPrefix = `sample-cluster-test-${randomBytes(6).toString('hex')}`;
  let cluster: ClusterProcess;
  let a: FleetInstance, b: FleetInstance, c: FleetInstance;
  let port: number;

  beforeAll(async () => {
    port = await consecutiveFreePorts(3);
    // The sample's file, with no retry delays and a break long enough to outlast the test.
    const config = build.resilienceFile((doc) => {
      doc.pipelines.weather.retry = { ...(doc.pipelines.weather.retry as object), delay: 0 };
      doc.pipelines.weather.circuitBreaker = {
        ...(doc.pipelines.weather.circuitBreaker as object),
        breakDuration: '5m',
      };
    });
    cluster = new ClusterProcess(['--no-build', '--entry', sampleEntry], {
      PORT: String(port),
      REDIS_URL: process.env.REDIS_URL,
      REDIS_KEY_PREFIX: keyPrefix,
      ADMIN_TOKEN,
      RESILIENCE_CONFIG: config,
      // One value cannot fit three instances: the script drops these, each instance derives its own.
      APP_URL: 'http://127.0.0.1:1',
      OIDC_PORT: '1',
    });
    [a, b, c] = await cluster.ready();
  }, START);

  afterAll(async () => {
    await cluster?.stop();
    const redis = new Redis(process.env.REDIS_URL!, { lazyConnect: true });
    await redis.connect();
    const keys = await redis.keys(`${keyPrefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
  }, 30_000);

  it('starts one instance per consecutive port, prefixes their output and prints every dashboard', () => {
    expect([a, b, c].map((i) => i.port)).toEqual([port, port + 1, port + 2]);
    for (const instance of [a, b, c]) {
      expect(instance.url).toBe(`http://127.0.0.1:${instance.port}`);
      // Each instance's own start-up text, prefixed with its port, on the shared store.
      expect(cluster.text).toContain(
        `[${instance.port}] nest-resilience sample on http://127.0.0.1:${instance.port} (store: redis)`,
      );
    }
    expect(cluster.text).toContain(`sharing ${process.env.REDIS_URL}`);
    expect(cluster.text).toContain(`key prefix ${keyPrefix}`);
    expect(cluster.text).toContain('ADMIN_TOKEN: the one from your environment');
    expect(cluster.text).not.toContain(ADMIN_TOKEN);
  });

  it('an opening on A shows on B’s and C’s admin API and /health; B rejects without calling its upstream', async () => {
    for (const instance of [a, b, c]) expect((await weatherCircuit(instance)).state).toBe('closed');
    const outage = await fetch(`${a.url}/upstreams/weather/mode`, {
      method: 'PUT',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ mode: 'outage' }),
    });
    expect(outage.status).toBe(200);

    // Strict calls on A until its circuit opens (6 consecutive failures: two calls of four attempts).
    const statuses: number[] = [];
    for (let i = 0; i < 10 && statuses.at(-1) !== 503; i++) {
      statuses.push((await fetch(`${a.url}/weather/lisbon/strict`)).status);
    }
    expect(statuses.at(-1)).toBe(503);
    expect(statuses.slice(0, -1).every((s) => s === 500)).toBe(true);

    for (const instance of [b, c]) {
      await circuitBecomes(instance, 'open');
      const down = await eventually(async () => {
        const result = await health(instance);
        return result.status === 503 ? result : undefined;
      }, `/health 503 on ${instance.port}`);
      expect(down.body.status).toBe('error');
      expect(down.body.error?.resilience?.circuits?.weather).toMatchObject({ status: 'down', state: 'open' });
    }

    const before = await weatherRequests(b);
    const rejected = await fetch(`${b.url}/weather/lisbon/strict`);
    expect(rejected.status).toBe(503);
    expect(Number(rejected.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await rejected.json()).toMatchObject({ statusCode: 503, message: 'The circuit of "weather" is open.' });
    expect(await weatherRequests(b)).toBe(before);
  });

  it('isolated from C’s admin API, A and B report it isolated', async () => {
    const isolated = await fetch(`${c.url}/resilience/circuits/weather/isolate`, { method: 'POST', headers: auth });
    expect(isolated.status).toBe(200);
    expect(await isolated.json()).toEqual([expect.objectContaining({ pipelineName: 'weather', state: 'isolated' })]);
    for (const instance of [a, b]) {
      await circuitBecomes(instance, 'isolated');
      expect((await health(instance)).body.error?.resilience?.circuits?.weather?.state).toBe('isolated');
    }
  });

  it('closed from B, it is closed and healthy on all three', async () => {
    const closed = await fetch(`${b.url}/resilience/circuits/weather/close`, { method: 'POST', headers: auth });
    expect(closed.status).toBe(200);
    for (const instance of [a, b, c]) {
      await circuitBecomes(instance, 'closed');
      await eventually(
        async () => ((await health(instance)).status === 200 ? true : undefined),
        `healthy ${instance.port}`,
      );
    }
  });

  it('gives each instance its own sign-in: redirect URI and identity provider of its own', async () => {
    const issuers = new Set<string>();
    for (const instance of [a, b, c]) {
      const login = await fetch(`${instance.url}/auth/login`, { redirect: 'manual' });
      expect(login.status).toBe(302);
      const location = new URL(login.headers.get('location')!);
      expect(location.searchParams.get('redirect_uri')).toBe(`${instance.url}/auth/callback`);
      issuers.add(location.origin);
    }
    expect(issuers.size).toBe(3);
    const rpcPorts = [...cluster.text.matchAll(/RPC port (\d+)\)/g)].map((m) => m[1]);
    expect(new Set(rpcPorts).size).toBe(3);
  });

  it('without the token the admin API of every instance refuses', async () => {
    for (const instance of [a, b, c]) {
      expect((await fetch(`${instance.url}/resilience/circuits`)).status).toBe(401);
      const wrong = await fetch(`${instance.url}/resilience/circuits`, { headers: { authorization: 'Bearer nope' } });
      expect(wrong.status).toBe(401);
    }
  });

  it('SIGTERM stops every instance and exits 0, leaving no process behind', async () => {
    expect([a, b, c].every((i) => isRunning(i.pid))).toBe(true);
    expect(await cluster.stop('SIGTERM')).toEqual({ code: 0, signal: null });
    for (const instance of [a, b, c]) expect(isRunning(instance.pid)).toBe(false);
    expect(processesMentioning(sampleEntry)).toEqual([]);
    expect(processesMentioning(cluster.reaper)).toEqual([]);
    expect(cluster.text).toContain('start-cluster: SIGTERM, stopping every instance…');
  });
});

describe('npm run start:cluster without REDIS_URL', () => {
  it(
    'starts its own redis-server, generates an admin token and stops both on Ctrl-C (SIGINT)',
    async () => {
      const port = await consecutiveFreePorts(1);
      const cluster = new ClusterProcess(['--no-build', '--entry', sampleEntry, '--instances', '1'], {
        PORT: String(port),
        REDIS_URL: undefined,
        ADMIN_TOKEN: undefined,
      });
      try {
        const [instance] = await cluster.ready();
        const redisPid = cluster.redisPid!;
        expect(isRunning(redisPid)).toBe(true);
        expect(cluster.text).toContain(`[${port}] nest-resilience sample on http://127.0.0.1:${port} (store: redis)`);
        const token = /export ADMIN_TOKEN=(\S+) {3}# generated for this run/.exec(cluster.text)![1];
        const circuits = await fetch(`${instance.url}/resilience/circuits`, {
          headers: { authorization: `Bearer ${token}` },
        });
        expect(circuits.status).toBe(200);

        // Ctrl-C: the terminal's SIGINT reaches the script only (its instances run in process groups of their own).
        expect(await cluster.stop('SIGINT')).toEqual({ code: 0, signal: null });
        expect(isRunning(redisPid)).toBe(false);
        expect(isRunning(instance.pid)).toBe(false);
        expect(cluster.text).toContain('start-cluster: SIGINT, stopping every instance and Redis…');
      } finally {
        await cluster.stop('SIGKILL');
      }
    },
    START,
  );

  it(
    'stops the others and Redis and exits 1 with its output when an instance dies during start-up',
    async () => {
      const port = await consecutiveFreePorts(2);
      const entry = build.crashingEntry();
      const cluster = new ClusterProcess(['--no-build', '--entry', entry, '--instances', '2'], {
        PORT: String(port),
        REDIS_URL: undefined,
        CLUSTER_TEST_CRASH_PORT: String(port + 1),
      });
      const { code, signal } = await cluster.exit();
      expect({ code, signal }).toEqual({ code: 1, signal: null });
      expect(cluster.text).toContain(`the instance on port ${port + 1} stopped during start-up (exit code 3)`);
      expect(cluster.text).toMatch(/Its output:\n {2}simulated start-up failure/);
      expect(cluster.text).not.toContain('Fleet ready');
      expect(isRunning(cluster.redisPid!)).toBe(false);
      expect(processesMentioning(entry)).toEqual([]);
      expect(processesMentioning(cluster.reaper)).toEqual([]);
    },
    START,
  );

  it(
    'refuses to start when a port of the fleet is taken, naming it',
    async () => {
      const port = await consecutiveFreePorts(2);
      const { createServer } = await import('node:net');
      const squatter = createServer();
      await new Promise<void>((resolve) => squatter.listen(port + 1, '127.0.0.1', resolve));
      try {
        const cluster = new ClusterProcess(['--no-build', '--entry', sampleEntry, '--instances', '2'], {
          PORT: String(port),
          REDIS_URL: undefined,
        });
        expect(await cluster.exit()).toEqual({ code: 1, signal: null });
        expect(cluster.text).toContain(`port ${port + 1} already in use on 127.0.0.1`);
        expect(cluster.redisPid).toBeUndefined();
        expect(processesMentioning(sampleEntry)).toEqual([]);
      } finally {
        await new Promise((resolve) => squatter.close(resolve));
      }
    },
    START,
  );

  it(
    'gives up after CLUSTER_START_TIMEOUT_MS without an answer, stopping what it started',
    async () => {
      const port = await consecutiveFreePorts(1);
      const cluster = new ClusterProcess(['--no-build', '--entry', sampleEntry, '--instances', '1'], {
        PORT: String(port),
        REDIS_URL: undefined,
        CLUSTER_START_TIMEOUT_MS: '1',
      });
      expect(await cluster.exit()).toEqual({ code: 1, signal: null });
      expect(cluster.text).toContain(`no answer within 1 ms from port ${port}`);
      expect(isRunning(cluster.redisPid!)).toBe(false);
      expect(processesMentioning(sampleEntry)).toEqual([]);
    },
    START,
  );

  it(
    'killed with SIGKILL, its instances and its redis-server still stop',
    async () => {
      const port = await consecutiveFreePorts(1);
      const cluster = new ClusterProcess(['--no-build', '--entry', sampleEntry, '--instances', '1'], {
        PORT: String(port),
        REDIS_URL: undefined,
      });
      try {
        const [instance] = await cluster.ready();
        const redisPid = cluster.redisPid!;
        expect(await cluster.stop('SIGKILL')).toEqual({ code: null, signal: 'SIGKILL' });
        await eventually(
          () => Promise.resolve(isRunning(instance.pid) || isRunning(redisPid) ? undefined : true),
          'the orphans stopped',
          20_000,
        );
        expect(processesMentioning(sampleEntry)).toEqual([]);
        // The safety net itself ends once nothing is left.
        await eventually(
          () => Promise.resolve(processesMentioning(cluster.reaper).length === 0 ? true : undefined),
          'the safety net ended',
          5_000,
        );
      } finally {
        await cluster.stop('SIGKILL');
      }
    },
    START,
  );
});
