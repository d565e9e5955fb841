import { Redis } from 'ioredis';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { ResiliencePipelineBuilder } from '../src/index.js';
import { RedisCircuitBreakerStateStore } from '../src/redis/index.js';

/**
 * The closed-circuit success path through the Redis store on loopback: calls/s for 1 and 3 instances
 * (each its own connection and store, one shared circuit), with and without the local read-through cache,
 * and the Redis script calls made per call. Needs Debian's redis-server; skipped without it.
 */
const CALLS_PER_INSTANCE = 20_000;
const CONCURRENCY = 32;

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

async function startRedis(): Promise<{ child: ChildProcess; url: string } | undefined> {
  try {
    execFileSync('redis-server', ['--version'], { stdio: 'ignore' });
  } catch {
    return undefined;
  }
  const port = await freePort();
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    {
      stdio: ['ignore', 'pipe', 'ignore'],
    },
  );
  await new Promise<void>((resolve) => {
    child.stdout.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('Ready to accept connections')) resolve();
    });
  });
  child.stdout.resume();
  return { child, url: `redis://127.0.0.1:${port}` };
}

async function run(
  url: string,
  instances: number,
  localCacheTtl: number,
): Promise<{ callsPerSecond: number; scriptsPerCall: number }> {
  const clients = Array.from({ length: instances }, () => new Redis(url));
  let scripts = 0;
  const prefix = `bench-${instances}-${localCacheTtl}-${Date.now()}`;
  const pipelines = clients.map((client) => {
    const store = new RedisCircuitBreakerStateStore({ client, keyPrefix: prefix, localCacheTtl });
    const script = (client as unknown as { nestResilienceCircuit: (...a: unknown[]) => Promise<unknown> })
      .nestResilienceCircuit;
    (client as unknown as { nestResilienceCircuit: unknown }).nestResilienceCircuit = (...a: unknown[]) => {
      scripts++;
      return script.apply(client, a);
    };
    return {
      store,
      pipeline: new ResiliencePipelineBuilder()
        .addCircuitBreaker({
          kind: 'time-window',
          failureRatio: 0.5,
          minimumThroughput: 100,
          stateStore: store,
          circuitKey: 'shared',
        })
        .build(),
    };
  });
  const ok = async () => 42;
  const started = process.hrtime.bigint();
  await Promise.all(
    pipelines.map(async ({ pipeline }) => {
      let next = 0;
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          while (next++ < CALLS_PER_INSTANCE) await pipeline.execute(ok);
        }),
      );
    }),
  );
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  await Promise.all(pipelines.map(({ store }) => store.flush()));
  await Promise.all(clients.map((c) => c.quit()));
  const calls = CALLS_PER_INSTANCE * instances;
  return { callsPerSecond: calls / seconds, scriptsPerCall: scripts / calls };
}

export async function redisTable(): Promise<string> {
  const redis = await startRedis();
  if (!redis) return '(redis-server is not installed: the Redis store benchmark was skipped)';
  try {
    const lines = [
      `closed circuit, success path, ${CONCURRENCY} concurrent callers per instance, ${CALLS_PER_INSTANCE} calls per instance`,
      '',
      '| instances | local cache | calls/s (all instances) | Redis script calls per call |',
      '| ---: | ---: | ---: | ---: |',
    ];
    for (const instances of [1, 3]) {
      for (const ttl of [0, 100]) {
        const { callsPerSecond, scriptsPerCall } = await run(redis.url, instances, ttl);
        lines.push(
          `| ${instances} | ${ttl ? `${ttl} ms` : 'off'} | ${callsPerSecond.toFixed(0)} | ${scriptsPerCall.toFixed(3)} |`,
        );
      }
    }
    return lines.join('\n');
  } finally {
    redis.child.kill('SIGKILL');
  }
}
