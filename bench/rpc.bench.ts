import 'reflect-metadata';
import { Controller, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ClientProxyFactory, MessagePattern, Transport, type ClientProxy } from '@nestjs/microservices';
import { fork } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { lastValueFrom, type Observable } from 'rxjs';
import { ResiliencePipelineRegistry } from '../src/core.entry.js';
import { ResilientClients, RPC_PREDICATES } from '../src/nest/microservices/index.js';

/**
 * `npm run bench:rpc`: a Nest TCP microservice in a child process; from this one, `send` of a small
 * message with `CONCURRENCY` calls in flight, through a bare `ClientProxy` and through the resilient
 * client (retry + circuit breaker + attempt timeout). Rounds alternate; medians are compared.
 * `--update-docs` writes the table into docs/rpc.md.
 */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);

@Controller()
class EchoController {
  @MessagePattern('echo')
  echo(data: unknown): unknown {
    return data;
  }
}

@Module({ controllers: [EchoController] })
class EchoModule {}

async function serve(): Promise<void> {
  const port = Number(process.argv[3]);
  const app = await NestFactory.createMicroservice(EchoModule, {
    transport: Transport.TCP,
    options: { host: '127.0.0.1', port },
    logger: false,
  });
  await app.listen();
  process.send!('ready');
  process.on('message', (message) => {
    if (message === 'stop') void app.close().then(() => process.exit(0));
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

interface Sample {
  readonly callsPerSecond: number;
  /** Client CPU time (user + system) per call, in microseconds. */
  readonly cpuPerCall: number;
}

async function load(send: () => Observable<unknown>, seconds: number): Promise<Sample> {
  const end = performance.now() + seconds * 1_000;
  const cpu = process.cpuUsage();
  const started = performance.now();
  let calls = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < end) {
        await lastValueFrom(send());
        calls++;
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1_000;
  const used = process.cpuUsage(cpu);
  return { callsPerSecond: calls / elapsed, cpuPerCall: (used.user + used.system) / calls };
}

function writeDocsSection(content: string): void {
  const page = 'docs/rpc.md';
  const text = readFileSync(page, 'utf8');
  const pattern = /<!-- bench-rpc:start -->[\s\S]*<!-- bench-rpc:end -->/;
  if (!pattern.test(text)) throw new Error(`${page} has no <!-- bench-rpc:start --> … <!-- bench-rpc:end --> section`);
  writeFileSync(page, text.replace(pattern, `<!-- bench-rpc:start -->\n${content}\n<!-- bench-rpc:end -->`));
}

async function main(): Promise<void> {
  const port = await freePort();
  const server = fork(fileURLToPath(import.meta.url), ['--serve', String(port)], { stdio: 'inherit' });
  await new Promise<void>((resolve) => server.once('message', () => resolve()));
  const options = { transport: Transport.TCP, options: { host: '127.0.0.1', port } } as const;
  const bare: ClientProxy = ClientProxyFactory.create(options);
  const wrapped: ClientProxy = ClientProxyFactory.create(options);
  const timed: ClientProxy = ClientProxyFactory.create(options);
  const registry = new ResiliencePipelineRegistry({
    predicates: { ...RPC_PREDICATES },
    pipelines: {
      rpc: {
        retry: { maxRetryAttempts: 3, delay: 100, backoffType: 'exponential', shouldHandle: 'rpc-retryable' },
        circuitBreaker: { kind: 'consecutive', failureThreshold: 5, breakDuration: 5_000, shouldHandle: 'rpc-failure' },
      },
      'rpc-timed': {
        retry: { maxRetryAttempts: 3, delay: 100, backoffType: 'exponential', shouldHandle: 'rpc-retryable' },
        circuitBreaker: { kind: 'consecutive', failureThreshold: 5, breakDuration: 5_000, shouldHandle: 'rpc-failure' },
        timeout: 2_000,
      },
    },
  });
  const clients = new ResilientClients(registry);
  const resilient = clients.wrap('bench', wrapped, { pipeline: 'rpc', replyTimeout: 2_000 });
  const withTimeout = clients.wrap('bench-timed', timed, { pipeline: 'rpc-timed' });
  const message = { sku: 'A-1', quantity: 2 };
  const cases = [
    { name: 'bare `ClientProxy.send`', send: () => bare.send('echo', message) },
    {
      name: 'resilient `send`: retry + circuit breaker + `replyTimeout` 2 s',
      send: () => resilient.send('echo', message),
    },
    {
      name: 'resilient `send`: retry + circuit breaker + pipeline `timeout` 2 s',
      send: () => withTimeout.send('echo', message),
    },
  ];
  try {
    await Promise.all([bare.connect(), wrapped.connect(), timed.connect()]);
    for (const c of cases) await load(c.send, 1); // warm up
    const samples = cases.map(() => [] as Sample[]);
    for (let round = 0; round < ROUNDS; round++) {
      // Every other round runs the cases in reverse order, so drift in the machine's load hits all alike.
      const order = round % 2 === 0 ? [...cases.keys()] : [...cases.keys()].reverse();
      for (const i of order) samples[i][round] = await load(cases[i].send, SECONDS);
      process.stderr.write('.');
    }
    process.stderr.write('\n');
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1];
    const rate = (i: number) => median(samples[i].map((s) => s.callsPerSecond));
    // Each round's ratio to the bare client of the same round, then the median: paired, so steadier.
    const ratio = (i: number) =>
      median(samples[i].map((s, round) => s.callsPerSecond / samples[0][round].callsPerSecond));
    const cpu = (i: number) => median(samples[i].map((s) => s.cpuPerCall));
    const pct = (x: number) => `${(x * 100).toFixed(0)} %`;
    const lines = [
      `Node ${process.version}, ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'CPU'}; TCP on loopback, ${CONCURRENCY} calls in flight, ${ROUNDS} rounds × ${SECONDS} s per case; medians (throughput vs bare: median of the per-round ratios)`,
      '',
      '| client | calls/s | throughput vs bare | client CPU µs/call |',
      '| --- | ---: | ---: | ---: |',
      ...cases.map((c, i) => `| ${c.name} | ${rate(i).toFixed(0)} | ${pct(ratio(i))} | ${cpu(i).toFixed(1)} |`),
    ];
    console.log(lines.join('\n'));
    if (process.argv.includes('--update-docs')) writeDocsSection(lines.join('\n'));
  } finally {
    bare.close();
    wrapped.close();
    timed.close();
    await registry.dispose();
    server.send('stop');
  }
}

if (process.argv[2] === '--serve') void serve();
else void main();
