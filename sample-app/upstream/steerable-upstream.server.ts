import { Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { outcomeFromValue, ResiliencePipelineBuilder, type ResiliencePipeline } from '../../src/index.js';
import type { UpstreamMode, UpstreamStatus } from './upstream-mode.model.js';

/** What an upstream answers: an HTTP status and a JSON body. */
export interface UpstreamReply {
  readonly status: number;
  readonly body: unknown;
}

/** What makes one upstream: its name, its mode at start and what it answers when nothing is injected. */
export interface SteerableUpstreamSettings {
  readonly name: string;
  readonly description: string;
  readonly mode: UpstreamMode;
  /** The latency of the `slow` mode, in milliseconds. */
  readonly slowLatency: number;
  /** The operation key of a request (its path segments without the leading one), e.g. the city. */
  readonly key: (segments: readonly string[]) => string;
  /** The answer when no fault is injected. */
  readonly answer: (segments: readonly string[]) => UpstreamReply;
  /** Keys that get a 503 whatever the mode (the weather upstream's "atlantis"). */
  readonly alwaysFailing?: (key: string) => boolean;
}

/** The share of calls the `transient` mode fails, and the fixed "random" numbers that decide which. */
const TRANSIENT_RATE = 2 / 3;
const TRANSIENT_SEQUENCE = [0.1, 0.5, 0.9];

const UNAVAILABLE: UpstreamReply = { status: 503, body: { error: 'unavailable' } };

/**
 * A stand-in for a remote dependency: an HTTP server on a loopback port whose faults come from the
 * library's chaos strategies, switched by its mode. `addChaosLatency` delays the calls of the `slow`
 * mode (cancelled when the caller hangs up); `addChaosOutcome` answers 503 instead of calling, to every
 * call in `outage`, to two calls in three in `transient` (a fixed sequence, restarted by `setMode`, so
 * the demo and its tests fail the same calls every run).
 */
export class SteerableUpstream implements OnModuleInit, OnModuleDestroy {
  private readonly logger: Logger;
  private readonly server: Server;
  private readonly chaos: ResiliencePipeline<UpstreamReply>;
  private current: UpstreamMode;
  private calls = 0;
  private pending = 0;
  private drawn = 0;
  private url = '';

  constructor(private readonly settings: SteerableUpstreamSettings) {
    this.logger = new Logger(`Upstream ${settings.name}`);
    this.current = settings.mode;
    const alwaysFailing = settings.alwaysFailing ?? (() => false);
    this.chaos = new ResiliencePipelineBuilder<UpstreamReply>({ name: `upstream:${settings.name}` })
      .addChaosLatency({
        name: 'slow',
        enabledGenerator: () => this.current === 'slow',
        injectionRate: 1,
        latencyGenerator: () => this.settings.slowLatency,
      })
      .addChaosOutcome({
        name: 'unavailable',
        enabledGenerator: ({ context }) =>
          this.current === 'transient' || this.current === 'outage' || alwaysFailing(context.operationKey ?? ''),
        injectionRateGenerator: ({ context }) =>
          this.current === 'outage' || alwaysFailing(context.operationKey ?? '') ? 1 : TRANSIENT_RATE,
        random: () => TRANSIENT_SEQUENCE[this.drawn++ % TRANSIENT_SEQUENCE.length],
        outcome: outcomeFromValue(UNAVAILABLE),
      })
      .build();
    this.server = createServer((req, res) => this.handle(req, res));
  }

  /** The name the control route knows it by. */
  get name(): string {
    return this.settings.name;
  }

  /** The base URL, e.g. `http://127.0.0.1:41234`. */
  get baseUrl(): string {
    return this.url;
  }

  /** How many requests the upstream has received. */
  get requestCount(): number {
    return this.calls;
  }

  /** Requests received and not answered yet (a slow call the caller gave up on is cancelled at once). */
  get inFlight(): number {
    return this.pending;
  }

  get mode(): UpstreamMode {
    return this.current;
  }

  /** Switches the mode; the `transient` sequence starts over. */
  setMode(mode: UpstreamMode): void {
    if (mode !== this.current) this.logger.log(`mode ${this.current} → ${mode}`);
    this.current = mode;
    this.drawn = 0;
  }

  status(): UpstreamStatus {
    return {
      name: this.name,
      mode: this.current,
      requests: this.calls,
      inFlight: this.pending,
      description: this.settings.description,
    };
  }

  async onModuleInit(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    const { port } = this.server.address() as AddressInfo;
    this.url = `http://127.0.0.1:${port}`;
    this.logger.log(`listening on ${this.url} (mode ${this.current})`);
  }

  async onModuleDestroy(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    await this.chaos.dispose();
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const segments = (req.url ?? '/').split('?')[0].split('/').filter(Boolean).map(decodeSegment).slice(1);
    const key = this.settings.key(segments);
    const call = ++this.calls;
    this.pending++;
    // A caller that gives up (its attempt timed out, a hedge won) cancels the injected latency.
    const hangUp = new AbortController();
    res.once('close', () => hangUp.abort());
    this.chaos
      .execute(() => this.settings.answer(segments), { operationKey: key, signal: hangUp.signal })
      .finally(() => this.pending--)
      .then(
        (reply) => {
          this.logger.log(`call #${call} for "${key}": answering ${reply.status}`);
          res.writeHead(reply.status, { 'content-type': 'application/json' }).end(JSON.stringify(reply.body));
        },
        (error: unknown) => {
          if (hangUp.signal.aborted) return; // nobody is listening any more
          this.logger.error(`call #${call} for "${key}" failed: ${String(error)}`);
          res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":"internal"}');
        },
      );
  }
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
