import type { Cluster, Redis } from 'ioredis';
import type { TimeProvider } from '../core/index.js';
import { describeError, keySlot } from './redis.util.js';

/** Something that logs (Nest's `Logger`, `console`, pino…). @publicApi */
export interface StoreLogger {
  warn(message: string): void;
  log?(message: string): void;
}

/** The whole of a single server or Sentinel-managed primary: one outage at a time. @internal */
export const WHOLE = '';

/**
 * Whether Redis may be asked, per node: after a failure a node is left alone for `retryInterval`; each
 * outage and each recovery of a node is logged once and reported once. A single server (or the primary a
 * Sentinel group announces) is one node, `WHOLE`; on a Redis Cluster each primary is its own node, so a
 * primary that is down does not stop the others from being used, and answers from the others do not end
 * its outage. Shared by every Redis-backed part, so they behave alike.
 *
 * @internal
 */
export class RedisAvailability {
  /** The nodes in an outage, and when each is tried again. */
  private readonly outages = new Map<string, number>();

  constructor(
    private readonly options: {
      /** Names the part in log lines, e.g. `Redis circuit-breaker store`. */
      readonly what: string;
      readonly outageMode: string;
      /** What happens while it is down, for the log line. Default: `using the "<outageMode>" outage mode`. */
      readonly whileDown?: string;
      readonly retryInterval: number;
      readonly time: TimeProvider;
      readonly logger: StoreLogger;
      readonly onChange?: (available: boolean, error?: unknown) => void;
      /** The connection: a failure while a cluster connection is not ready is the whole connection's. */
      readonly client?: Redis | Cluster;
    },
  ) {}

  /** True from a failure until Redis answers again (on a cluster: while any primary is in an outage). */
  get isDegraded(): boolean {
    return this.outages.size > 0;
  }

  /** True from a failure of `node` until it answers again. */
  isDown(node: string): boolean {
    return this.outages.has(node);
  }

  /** The nodes in an outage. */
  get downNodes(): Iterable<string> {
    return this.outages.keys();
  }

  /** True while `node` (or the whole connection) is to be left alone (the outage mode answers instead). */
  skip(node: string): boolean {
    const now = this.options.time.now();
    return now < (this.outages.get(node) ?? -Infinity) || now < (this.outages.get(WHOLE) ?? -Infinity);
  }

  /** Milliseconds until `node` will be tried again. */
  retryAfter(now: number, node: string): number {
    return Math.max(1, Math.max(this.outages.get(node) ?? now, this.outages.get(WHOLE) ?? now) - now);
  }

  /**
   * Records a failure of `node`; the first of its outage is logged and reported. A cluster connection that
   * is not ready (starting over after a failed ready check, reconnecting) fails every call whatever its
   * node: that is one outage of the whole connection, not one per primary.
   *
   * @returns the node the failure was recorded for (`WHOLE` for the connection).
   */
  failed(error: unknown, node: string): string {
    const client = this.options.client;
    if (client?.isCluster && client.status !== 'ready') node = WHOLE;
    this.record(error, node);
    return node;
  }

  private record(error: unknown, node: string): void {
    const first = !this.outages.has(node);
    this.outages.set(node, this.options.time.now() + this.options.retryInterval);
    if (!first) return;
    this.options.logger.warn(
      `${this.options.what} unavailable${where(node)} (${describeError(error)}); ${this.options.whileDown ?? `using the "${this.options.outageMode}" outage mode`} until it is back.`,
    );
    this.options.onChange?.(false, error);
  }

  /** Records an answer of `node`; the one that ends its outage (or the whole connection's) is logged and reported. */
  answered(node: string): void {
    if (node !== WHOLE) this.answered(WHOLE);
    if (!this.outages.delete(node)) return;
    const logger = this.options.logger;
    (logger.log ?? logger.warn).call(logger, `${this.options.what} is back${where(node)}.`);
    this.options.onChange?.(true);
  }
}

function where(node: string): string {
  return node === WHOLE ? '' : ` on cluster node ${node}`;
}

/**
 * The node that serves a key: on a Redis Cluster the primary its slot is mapped to (as the client knows
 * it: `host:port`), otherwise `WHOLE`. A slot the client knows no owner of yet counts as `WHOLE` too.
 *
 * @internal
 */
export function nodeOf(client: Redis | Cluster, key: string): string {
  const slots = (client as { slots?: (string[] | undefined)[] }).slots;
  if (!client.isCluster || !slots) return WHOLE;
  return slots[keySlot(key)]?.[0] ?? WHOLE;
}

/** Whether any slot is still mapped to `node` (a primary replaced in a failover no longer is). @internal */
export function servesSlots(client: Redis | Cluster, node: string): boolean {
  if (node === WHOLE) return true;
  const slots = (client as { slots?: (string[] | undefined)[] }).slots ?? [];
  for (const owners of slots) if (owners?.[0] === node) return true;
  return false;
}

/** Per cluster client: the calls waiting on each node, told when that node refuses a connection. */
const refusalWatches = new WeakMap<object, Map<string, Set<(error: unknown) => void>>>();

/**
 * Settles like `promise`, or rejects as soon as the cluster node `node` refuses a connection while it is
 * pending. ioredis retries a call whose node connection closed (for a failover to finish) until its
 * redirections run out; a primary that is down for good refuses every attempt at once, and its calls
 * need not wait for the operation timeout. (A single server or Sentinel connection fails such a call at
 * once already: `promise` is returned as is.)
 *
 * @internal
 */
export function failFastOnRefusal<T>(client: Redis | Cluster, node: string, promise: Promise<T>): Promise<T> {
  if (!client.isCluster || node === WHOLE) return promise;
  let watch = refusalWatches.get(client);
  if (!watch) {
    const listeners = new Map<string, Set<(error: unknown) => void>>();
    refusalWatches.set(client, (watch = listeners));
    client.on('node error', (error: unknown, key: string) => {
      if ((error as { code?: unknown } | null)?.code !== 'ECONNREFUSED') return;
      for (const refused of [...(listeners.get(key) ?? [])]) refused(error);
    });
  }
  const listeners = watch;
  return new Promise<T>((resolve, reject) => {
    let waiting = listeners.get(node);
    if (!waiting) listeners.set(node, (waiting = new Set()));
    const done = (): void => {
      waiting.delete(refused);
      if (waiting.size === 0) listeners.delete(node);
    };
    const refused = (error: unknown): void => {
      done();
      reject(error instanceof Error ? error : new Error(String(error)));
    };
    waiting.add(refused);
    promise.then(
      (value) => {
        done();
        resolve(value);
      },
      (error: unknown) => {
        done();
        reject(error);
      },
    );
  });
}
