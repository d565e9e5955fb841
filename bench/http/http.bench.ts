import autocannon from 'autocannon';
import { fork, type ChildProcess } from 'node:child_process';
import os from 'node:os';
import { replaceReadmeSection } from '../readme.util.js';
import { fileURLToPath } from 'node:url';

/**
 * `npm run bench:http`: the sample routes of `bench-server.ts` in a child process, loaded by autocannon
 * from this one on loopback (10 connections). Rounds alternate between routes; each route's median
 * requests/s is compared with the bare route and with a no-op interceptor.
 */
const ROUTES = [
  { path: '/bare', name: 'bare route' },
  { path: '/decorated', name: '@Retry + @CircuitBreaker (wrapped handler)' },
  { path: '/noop-interceptor', name: 'no-op interceptor' },
  { path: '/intercepted', name: 'ResilienceInterceptor (retry + circuit breaker)' },
];
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const DURATION = Number(process.env.BENCH_SECONDS ?? 5);

interface Sample {
  /** Requests per second seen by the client. */
  readonly rps: number;
  /** Server CPU time (user + system) per request, in microseconds: steadier than throughput on a shared machine. */
  readonly cpuPerRequest: number;
}

function serverCpu(server: ChildProcess): Promise<number> {
  return new Promise((resolve) => {
    server.once('message', (m: { cpu: number }) => resolve(m.cpu));
    server.send('cpu');
  });
}

async function load(server: ChildProcess, url: string, duration: number): Promise<Sample> {
  const before = await serverCpu(server);
  const result = await autocannon({ url, connections: 10, duration, pipelining: 1 });
  const after = await serverCpu(server);
  if (result.errors || result.non2xx) throw new Error(`${url}: ${result.errors} errors, ${result.non2xx} non-2xx`);
  return { rps: result.requests.average, cpuPerRequest: (after - before) / result.requests.total };
}

async function main(): Promise<void> {
  const server = fork(fileURLToPath(new URL('./bench-server.js', import.meta.url)), { stdio: 'inherit' });
  const base = await new Promise<string>((resolve) => server.once('message', (m: { url: string }) => resolve(m.url)));
  try {
    for (const route of ROUTES) await load(server, base + route.path, 1); // warm up
    const samples = new Map<string, Sample[]>(ROUTES.map((r) => [r.path, []]));
    for (let round = 0; round < ROUNDS; round++) {
      for (const route of ROUTES) samples.get(route.path)!.push(await load(server, base + route.path, DURATION));
      process.stderr.write('.');
    }
    process.stderr.write('\n');
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1];
    const rps = (path: string) => median(samples.get(path)!.map((s) => s.rps));
    const cpu = (path: string) => median(samples.get(path)!.map((s) => s.cpuPerRequest));
    const pct = (x: number) => `${(x * 100).toFixed(0)} %`;
    const lines = [
      `Node ${process.version}, ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'CPU'}; autocannon, 10 connections, median of ${ROUNDS} × ${DURATION} s per route`,
      '',
      '| route | requests/s | throughput vs bare | vs no-op interceptor | server CPU µs/request | capacity vs bare (CPU) | vs no-op interceptor (CPU) |',
      '| --- | ---: | ---: | ---: | ---: | ---: | ---: |',
      ...ROUTES.map(({ path: p, name }) =>
        [
          name,
          rps(p).toFixed(0),
          pct(rps(p) / rps('/bare')),
          pct(rps(p) / rps('/noop-interceptor')),
          cpu(p).toFixed(0),
          pct(cpu('/bare') / cpu(p)),
          pct(cpu('/noop-interceptor') / cpu(p)),
        ].join(' | '),
      ).map((row) => `| ${row} |`),
    ];
    console.log(lines.join('\n'));
    if (process.argv.includes('--update-readme')) await replaceReadmeSection('bench-http', lines.join('\n'));
  } finally {
    server.send('stop');
  }
}

void main();
