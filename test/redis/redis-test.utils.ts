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
