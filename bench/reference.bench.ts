import type { BenchCase, BenchRun } from './bench.harness.js';

/** The callback every scenario runs: an async function that returns at once. */
export const value = async (): Promise<number> => 42;

/** Calls started at once by the concurrent scenarios. */
export const CONCURRENT_CALLS = 10_000;

/** Starts `calls` runs at once and waits for all of them. */
export function batch(run: BenchRun, calls = CONCURRENT_CALLS): BenchRun {
  return () => Promise.all(Array.from({ length: calls }, run));
}

/** `await fn()` with nothing around it, one call at a time. */
export const bareCase: BenchCase = { name: 'bare await fn()', shareKey: 'bare', setup: () => () => value() };

/** `CONCURRENT_CALLS` bare calls at once. */
export const bareBatchCase: BenchCase = {
  name: 'bare await fn()',
  shareKey: 'bare-batch',
  setup: () => batch(() => value()),
};

/** Retries a function up to `retries` times, with nothing else: what a hand-written retry costs. */
export function plainRetryLoop<R>(fn: () => Promise<R>, retries: number): () => Promise<R> {
  return async () => {
    for (let attempt = 0; ; attempt++) {
      try {
        return await fn();
      } catch (error) {
        if (attempt >= retries) throw error;
      }
    }
  };
}

/**
 * The smallest bulkhead one would write by hand: a permit count and a FIFO of the resolvers of waiting
 * callers; a finished call hands its permit straight to the oldest waiter.
 */
export function plainFifoBulkhead(permits: number): <R>(fn: () => Promise<R>) => Promise<R> {
  let available = permits;
  let waiting: (() => void)[] = [];
  let head = 0;
  const release = (): void => {
    if (head < waiting.length) {
      const next = waiting[head];
      waiting[head++] = undefined as never;
      if (head === waiting.length) {
        waiting = [];
        head = 0;
      }
      next();
    } else {
      available++;
    }
  };
  return async (fn) => {
    if (available > 0) available--;
    else await new Promise<void>((resolve) => waiting.push(resolve));
    try {
      return await fn();
    } finally {
      release();
    }
  };
}
