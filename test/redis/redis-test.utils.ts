import { afterEach } from '@jest/globals';
import { Redis } from 'ioredis';

/** A client on the test run's redis-server (started by the global setup). */
export function redisClient(options: { retryDelay?: number; url?: string } = {}): Redis {
  const url = options.url ?? process.env.REDIS_URL;
  if (!url) throw new Error('REDIS_URL is not set: the Jest global setup starts redis-server.');
  return new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    retryStrategy: () => options.retryDelay ?? 20,
  });
}

/** Waits (event-loop turns, bounded) until the client is ready. */
export async function ready(client: Redis): Promise<void> {
  if (client.status === 'ready') return;
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('redis client not ready')), 5_000);
    const onReady = () => {
      clearTimeout(timer);
      client.off('error', onError);
      resolve();
    };
    const onError = () => undefined;
    client.once('ready', onReady);
    client.on('error', onError);
  });
}

let sequence = 0;
/** A key prefix no other test uses. */
export function uniquePrefix(label: string): string {
  return `test-${process.pid}-${label}-${++sequence}-${Date.now()}`;
}

/** What a test leaves to undo: each function runs after the test, the last added first. */
export type Cleanups = (() => Promise<unknown> | void)[];

/** Cleanups run after each test of the calling spec file (call it once, at the top of the file). */
export function cleanupAfterEach(): Cleanups {
  const cleanups: Cleanups = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  return cleanups;
}

/** A ready client on `url` (default: the test run's server), reconnecting every 20 ms, disconnected by `cleanups`. */
export async function readyClient(cleanups: Cleanups, url?: string): Promise<Redis> {
  const c = redisClient({ url, retryDelay: 20 });
  c.on('error', () => undefined);
  cleanups.push(() => c.disconnect());
  await ready(c);
  return c;
}
