import { expect } from '@jest/globals';
import type { Cluster, Redis } from 'ioredis';
import { toCircuitPolicy } from '../../src/core/circuit-breaker/circuit-breaker.strategy.js';
import { RedisCircuitBreakerStateStore, type StoreOutageMode } from '../../src/redis/index.js';
import { FakeTimeProvider } from '../../src/testing/index.js';
import { uniquePrefix } from './redis-test.utils.js';

/**
 * The outage modes, on any topology: while Redis does not answer (`induce`), every store answers from its
 * mode at once — `local` keeps a breaker in the process, `allow` lets calls through, `reject` fails closed
 * — each logging once; when Redis answers again (`restore`) they use it again and say so once.
 */
export async function expectOutageModes(
  client: () => Promise<Redis | Cluster>,
  /** Makes Redis stop answering for the circuit whose hash is at `redisKey`. */
  induce: (redisKey: string) => Promise<void> | void,
  restore: () => Promise<void> | void,
): Promise<void> {
  const time = new FakeTimeProvider(Date.now());
  const keyPrefix = uniquePrefix('outage-modes');
  const policy = toCircuitPolicy({ kind: 'consecutive', failureThreshold: 2, breakDuration: 60_000 });
  const modes: StoreOutageMode[] = ['local', 'allow', 'reject'];
  const stores = [];
  for (const mode of modes) {
    const log = { warnings: [] as string[], infos: [] as string[] };
    const store = new RedisCircuitBreakerStateStore({
      client: await client(),
      keyPrefix,
      outageMode: mode,
      timeProvider: time,
      retryInterval: 1_000,
      operationTimeout: 800,
      logger: { warn: (m) => log.warnings.push(m), log: (m) => log.infos.push(m) },
    });
    stores.push({ mode, store, log });
  }
  const key = `k-${keyPrefix}`;
  for (const { store } of stores) expect((await store.acquire(key, policy, time.now())).state).toBe('closed');

  await induce(stores[0].store.keyFor(key));
  try {
    for (const { mode, store, log } of stores) {
      const first = await store.acquire(key, policy, time.now());
      expect(store.isDegraded).toBe(true);
      if (mode === 'reject') {
        expect(first.permit).toBeUndefined();
        expect(first.state).toBe('open');
        const second = store.acquire(key, policy, time.now()); // no Redis call: synchronous
        expect((second as { retryAfter: number }).retryAfter).toBeGreaterThan(0);
      } else if (mode === 'allow') {
        for (let i = 0; i < 3; i++) {
          const d = await store.acquire(key, policy, time.now());
          expect(d.permit).toBeDefined();
          await store.record(key, policy, d.permit!, 'failure', time.now());
        }
        expect((await store.acquire(key, policy, time.now())).permit).toBeDefined(); // never opens
      } else {
        // local: a breaker in this process keeps protecting the dependency.
        let permit = first.permit!;
        await store.record(key, policy, permit, 'failure', time.now());
        permit = (await store.acquire(key, policy, time.now())).permit!;
        await store.record(key, policy, permit, 'failure', time.now());
        const opened = await store.acquire(key, policy, time.now());
        expect(opened.state).toBe('open');
        expect(opened.permit).toBeUndefined();
      }
      expect(log.warnings).toHaveLength(1);
      expect(log.warnings[0]).toContain(`"${mode}" outage mode`);
    }
  } finally {
    await restore();
  }
  time.advance(1_000);
  for (const { store, log } of stores) {
    // Redis is asked again after retryInterval (the client may need a moment to reconnect).
    await waitUntilAnswering(store, key, policy, time);
    expect(log.infos).toHaveLength(1);
    expect(log.warnings).toHaveLength(1);
  }
  await Promise.all(stores.map(({ store }) => store.flush()));
}

async function waitUntilAnswering(
  store: RedisCircuitBreakerStateStore,
  key: string,
  policy: ReturnType<typeof toCircuitPolicy>,
  time: FakeTimeProvider,
): Promise<void> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    await store.acquire(key, policy, time.now());
    if (!store.isDegraded) return;
    if (Date.now() > deadline) throw new Error('the store did not use Redis again');
    await new Promise((resolve) => setTimeout(resolve, 25));
    time.advance(1_000);
  }
}
