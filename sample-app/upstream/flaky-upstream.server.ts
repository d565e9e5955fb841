import { Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A deliberately unreliable weather service on a loopback port, standing in for a real dependency.
 * `/forecast/:city` fails the first two of every three calls with 503; `/forecast/atlantis` always fails.
 */
@Injectable()
export class FlakyUpstreamServer implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('FlakyUpstream');
  private readonly server: Server;
  private calls = 0;
  private url = '';

  constructor() {
    this.server = createServer((req, res) => {
      const city = decodeURIComponent((req.url ?? '').split('/')[2] ?? '');
      const call = ++this.calls;
      if (city === 'atlantis' || call % 3 !== 0) {
        this.logger.log(`call #${call} for "${city}": answering 503`);
        res.writeHead(503, { 'content-type': 'application/json' }).end('{"error":"unavailable"}');
        return;
      }
      this.logger.log(`call #${call} for "${city}": answering 200`);
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ city, temperature: 21, sky: 'clear' }));
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
  }
}
