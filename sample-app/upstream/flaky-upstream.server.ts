import { Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { outcomeFromValue, ResiliencePipelineBuilder, type ResiliencePipeline } from '../../src/index.js';

interface Reply {
  readonly status: number;
  readonly body: unknown;
}

/** Cycles through fixed "random" numbers, so the demo (and its tests) fail the same calls every run. */
function cycle(values: readonly number[]): () => number {
  let i = 0;
  return () => values[i++ % values.length];
}

/**
 * A deliberately unreliable weather service on a loopback port, standing in for a real dependency. Its
 * faults come from chaos strategies: a 503 outcome injected into two calls in three (every call for
 * Atlantis), and optional latency (`CHAOS_LATENCY_MS`, `CHAOS_LATENCY_RATE`).
 */
@Injectable()
export class FlakyUpstreamServer implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('FlakyUpstream');
  private readonly server: Server;
  private readonly chaos: ResiliencePipeline<Reply>;
  private calls = 0;
  private url = '';

  constructor() {
    this.chaos = new ResiliencePipelineBuilder<Reply>({ name: 'flaky-upstream', random: cycle([0.1, 0.5, 0.9]) })
      .addChaosOutcome({
        injectionRateGenerator: ({ context }) => (context.operationKey === 'atlantis' ? 1 : 2 / 3),
        outcome: outcomeFromValue({ status: 503, body: { error: 'unavailable' } }),
      })
      .addChaosLatency({
        injectionRate: Number(process.env.CHAOS_LATENCY_RATE ?? 0),
        latency: Number(process.env.CHAOS_LATENCY_MS ?? 3_000),
      })
      .build();
    this.server = createServer((req, res) => {
      const city = decodeURIComponent((req.url ?? '').split('/')[2] ?? '');
      const call = ++this.calls;
      void this.chaos
        .execute(() => ({ status: 200, body: { city, temperature: 21, sky: 'clear' } }), { operationKey: city })
        .then((reply) => {
          this.logger.log(`call #${call} for "${city}": answering ${reply.status}`);
          res.writeHead(reply.status, { 'content-type': 'application/json' }).end(JSON.stringify(reply.body));
        });
    });
  }

  /** The base URL, e.g. `http://127.0.0.1:41234`. */
  get baseUrl(): string {
    return this.url;
  }

  /** How many requests the upstream has received. */
  get requestCount(): number {
    return this.calls;
  }

  async onModuleInit(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    const { port } = this.server.address() as AddressInfo;
    this.url = `http://127.0.0.1:${port}`;
    this.logger.log(`listening on ${this.url}`);
  }

  async onModuleDestroy(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    await this.chaos.dispose();
  }
}
