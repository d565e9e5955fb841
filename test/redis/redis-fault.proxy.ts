import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';

type Direction = 'toUpstream' | 'toClient';

interface Connection {
  readonly client: Socket;
  readonly upstream: Socket;
  /** Bytes held while black-holed, in arrival order. */
  readonly held: { direction: Direction; chunk: Buffer }[];
  /** When the last delayed chunk of each direction is due (keeps order when the latency changes). */
  readonly lastDue: Record<Direction, number>;
}

/**
 * A TCP proxy between a client and redis-server that injects network faults on command: latency, a
 * black hole (bytes accepted and held, nothing answered, no RST, no FIN — what a dead peer or a
 * partition looks like until the OS gives up, minutes later), a reset of every connection, and a
 * half-close (FIN towards the client while the Redis side stays open).
 */
export class RedisFaultProxy {
  private readonly connections = new Set<Connection>();
  private readonly timers = new Set<ReturnType<typeof setTimeout>>();
  private latency = 0;
  private holding = false;
  /** Connections accepted so far (reconnections show up here). */
  accepted = 0;
  /** The first bytes each accepted connection sent, in order (what protocol the client speaks). */
  readonly firstChunks: Buffer[] = [];

  private constructor(
    private readonly server: Server,
    private readonly target: { host: string; port: number },
  ) {}

  /** Listens on a free loopback port, forwarding to `target` (a `redis://host:port` URL or a port). */
  static async start(target: string | number): Promise<RedisFaultProxy> {
    const { hostname, port } =
      typeof target === 'number' ? { hostname: '127.0.0.1', port: String(target) } : new URL(target);
    const server = createServer();
    const proxy = new RedisFaultProxy(server, { host: hostname, port: Number(port) });
    server.on('connection', (client) => proxy.accept(client));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    return proxy;
  }

  get url(): string {
    return `redis://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  get openConnections(): number {
    return this.connections.size;
  }

  /** Chunks held by the black hole on their way to Redis (what the clients tried to send). */
  get heldToRedis(): number {
    let count = 0;
    for (const { held } of this.connections) count += held.filter((h) => h.direction === 'toUpstream').length;
    return count;
  }

  /** Delays every chunk, both ways, by `ms`. */
  setLatency(ms: number): void {
    this.latency = ms;
  }

  /** Holds every byte from now on, both ways, on existing and new connections; nothing is closed. */
  blackhole(): void {
    this.holding = true;
  }

  /** Ends the black hole: held bytes are delivered in order (as TCP would after a partition heals). */
  heal(): void {
    this.holding = false;
    this.latency = 0;
    for (const connection of this.connections) {
      const held = connection.held.splice(0);
      for (const { direction, chunk } of held) this.forward(connection, direction, chunk);
    }
  }

  /** Resets every open connection (RST to both sides). */
  drop(): void {
    for (const connection of [...this.connections]) {
      connection.client.resetAndDestroy();
      connection.upstream.resetAndDestroy();
      this.connections.delete(connection);
    }
  }

  /** Sends FIN to every client; the connection to Redis stays open and its replies are discarded. */
  halfClose(): void {
    for (const connection of this.connections) {
      connection.upstream.removeAllListeners('data');
      connection.upstream.on('data', () => undefined);
      connection.client.end();
    }
  }

  async close(): Promise<void> {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    for (const { client, upstream } of this.connections) {
      client.destroy();
      upstream.destroy();
    }
    this.connections.clear();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: Socket): void {
    this.accepted++;
    const upstream = connect(this.target.port, this.target.host);
    const connection: Connection = { client, upstream, held: [], lastDue: { toUpstream: 0, toClient: 0 } };
    this.connections.add(connection);
    const teardown = (): void => {
      this.connections.delete(connection);
      client.destroy();
      upstream.destroy();
    };
    client.once('data', (chunk: Buffer) => void this.firstChunks.push(chunk));
    client.on('data', (chunk: Buffer) => this.relay(connection, 'toUpstream', chunk));
    upstream.on('data', (chunk: Buffer) => this.relay(connection, 'toClient', chunk));
    client.on('error', teardown);
    upstream.on('error', teardown);
    client.on('close', teardown);
    upstream.on('close', teardown);
  }

  private relay(connection: Connection, direction: Direction, chunk: Buffer): void {
    if (this.holding) connection.held.push({ direction, chunk });
    else this.forward(connection, direction, chunk);
  }

  private forward(connection: Connection, direction: Direction, chunk: Buffer): void {
    const target = direction === 'toUpstream' ? connection.upstream : connection.client;
    if (this.latency <= 0 && connection.lastDue[direction] <= Date.now()) {
      if (target.writable) target.write(chunk);
      return;
    }
    const due = Math.max(Date.now() + this.latency, connection.lastDue[direction]);
    connection.lastDue[direction] = due;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      if (this.holding) connection.held.push({ direction, chunk });
      else if (target.writable) target.write(chunk);
    }, due - Date.now());
    this.timers.add(timer);
  }
}
