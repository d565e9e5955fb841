import { EventEmitter } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type ReplicaHandler = (req: IncomingMessage, res: ServerResponse, body: string) => void;

/** A real HTTP server on a loopback port standing for one replica of a service. */
export class Replica extends EventEmitter {
  hits = 0;
  /** Requests whose connection closed before the replica answered (the client aborted them). */
  aborted = 0;
  /** `Date.now()` of each abort. */
  readonly abortedAt: number[] = [];
  readonly bodies: string[] = [];
  readonly paths: string[] = [];
  url = '';
  authority = '';
  private readonly server: Server;

  constructor(
    readonly name: string,
    public handler: ReplicaHandler = (_req, res) => json(res, 200, { server: name }),
  ) {
    super();
    this.server = createServer((req, res) => {
      this.hits++;
      this.paths.push(req.url ?? '');
      this.emit('hit');
      res.on('close', () => {
        if (!res.writableFinished) {
          this.aborted++;
          this.abortedAt.push(Date.now());
          this.emit('aborted');
        }
      });
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (chunk: string) => (body += chunk));
      req.on('end', () => {
        this.bodies.push(body);
        this.handler(req, res, body);
      });
    });
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.authority = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    this.url = this.authority;
    return this;
  }

  /** Resolves once `count` requests have reached this replica (bounded by the test's timeout). */
  async hitCount(count: number): Promise<void> {
    while (this.hits < count) await new Promise((resolve) => this.once('hit', resolve));
  }

  /** Resolves once `count` requests have been aborted (bounded by the test's timeout). */
  async abortedCount(count: number): Promise<void> {
    while (this.aborted < count) await new Promise((resolve) => this.once('aborted', resolve));
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

export const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) =>
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));

/** Answers after `ms` unless the client goes away first (no timer outlives the request). */
export function answerAfter(ms: number, answer: (res: ServerResponse) => void): ReplicaHandler {
  return (_req, res) => {
    const timer = setTimeout(() => answer(res), ms);
    res.on('close', () => clearTimeout(timer));
  };
}

/**
 * A handler that holds each request until the test calls `release()`, which answers them all; requests
 * that come in (or finish arriving) after it are answered at once.
 */
export function held(answer: (res: ServerResponse) => void): { handler: ReplicaHandler; release: () => void } {
  const waiting: ServerResponse[] = [];
  let released = false;
  return {
    handler: (_req, res) => (released ? answer(res) : void waiting.push(res)),
    release: () => {
      released = true;
      for (const res of waiting.splice(0)) if (!res.destroyed) answer(res);
    },
  };
}

/** Never answers (the client's timeout or abort ends the request). */
export const hang: ReplicaHandler = () => undefined;

/** A seeded random in [0, 1) (mulberry32). */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}
