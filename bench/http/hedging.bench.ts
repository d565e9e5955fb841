import 'reflect-metadata';
import { Test, type TestingModule } from '@nestjs/testing';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { ResilienceModule } from '../../src/index.js';
import { seededRandom } from '../seeded.random.js';
import {
  getResilientHttpClientToken,
  ResilientHttpModule,
  type ResilientHttpClient,
} from '../../src/nest/http/index.js';

/**
 * `npm run bench:hedging`: three replicas on loopback, one of them slow. A fixed loop of `REQUESTS`
 * requests (one at a time; `BENCH_CONCURRENCY` for more in flight) through (1) the plain standard handler, spreading the requests
 * round-robin over the replicas, and (2) the standard hedging handler over the same replicas as three
 * equally weighted groups, hedging after `HEDGING_DELAY` ms. Prints p50/p90/p99/max latency per client.
 * `--update-docs` writes the table into docs/http.md.
 */
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 2_000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 1);
const SLOW_MS = Number(process.env.BENCH_SLOW_MS ?? 50);
const HEDGING_DELAY = Number(process.env.BENCH_HEDGING_DELAY ?? 20);

async function replica(delay: number): Promise<{ server: Server; url: string }> {
  const server = createServer((_req, res) => {
    const answer = () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    if (delay === 0) return answer();
    const timer = setTimeout(answer, delay);
    res.on('close', () => clearTimeout(timer));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/** Runs `requests` requests, `CONCURRENCY` at a time; returns each one's latency in ms. */
async function loop(send: (i: number) => Promise<unknown>, requests = REQUESTS): Promise<number[]> {
  const latencies: number[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < requests) {
      const i = next++;
      const started = performance.now();
      await send(i);
      latencies.push(performance.now() - started);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return latencies;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

async function main(): Promise<void> {
  const replicas = await Promise.all([replica(SLOW_MS), replica(0), replica(0)]);
  const urls = replicas.map((r) => r.url);
  let moduleRef: TestingModule | undefined;
  try {
    moduleRef = await Test.createTestingModule({
      imports: [
        ResilienceModule.forRoot({}),
        ResilientHttpModule.register({ name: 'plain' }),
        ResilientHttpModule.register({
          name: 'hedged',
          hedging: {
            routing: { kind: 'weighted', groups: urls.map((url) => ({ endpoints: [url] })) },
            hedging: { delay: HEDGING_DELAY, maxHedgedAttempts: 2 },
            random: seededRandom(1),
          },
        }),
      ],
    }).compile();
    const plain = moduleRef.get<ResilientHttpClient>(getResilientHttpClientToken('plain'));
    const hedged = moduleRef.get<ResilientHttpClient>(getResilientHttpClientToken('hedged'));
    const clients = [
      { name: 'standard handler (round-robin over the replicas)', send: (i: number) => plain.get(`${urls[i % 3]}/r`) },
      {
        name: `standard hedging handler (weighted groups, hedge after ${HEDGING_DELAY} ms)`,
        send: () => hedged.get('/r'),
      },
    ];
    for (const client of clients) await loop(client.send, 200); // warm up
    const rows: string[] = [];
    for (const client of clients) {
      const sorted = (await loop(client.send)).sort((a, b) => a - b);
      const cells = [50, 90, 99].map((p) => percentile(sorted, p).toFixed(1));
      rows.push(`| ${client.name} | ${cells.join(' | ')} | ${sorted[sorted.length - 1].toFixed(1)} |`);
    }
    const lines = [
      `Node ${process.version}, ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'CPU'}; ${REQUESTS} requests, ${CONCURRENCY} in flight; three loopback replicas, one answering after ${SLOW_MS} ms`,
      '',
      '| client | p50 ms | p90 ms | p99 ms | max ms |',
      '| --- | ---: | ---: | ---: | ---: |',
      ...rows,
    ];
    console.log(lines.join('\n'));
    if (process.argv.includes('--update-docs')) {
      const page = 'docs/http.md';
      const pattern = /<!-- bench-hedging:start -->[\s\S]*<!-- bench-hedging:end -->/;
      const text = readFileSync(page, 'utf8');
      if (!pattern.test(text)) throw new Error(`${page} has no bench-hedging section`);
      writeFileSync(
        page,
        text.replace(pattern, `<!-- bench-hedging:start -->\n${lines.join('\n')}\n<!-- bench-hedging:end -->`),
      );
    }
  } finally {
    await moduleRef?.close();
    for (const { server } of replicas) {
      server.closeAllConnections();
      server.close();
    }
  }
}

await main();
