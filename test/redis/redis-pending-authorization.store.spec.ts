import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type Socket } from 'node:net';
import { Redis } from 'ioredis';
import { PendingLoginLimitError, type PendingAuthorization } from '../../src/oauth/index.js';
import { PendingStoreUnavailableError, RedisPendingAuthorizationStore } from '../../src/redis/index.js';
import { FakeTimeProvider } from '../../src/testing/index.js';
import { ready, redisClient, uniquePrefix } from './redis-test.utils.js';

const entry: PendingAuthorization = {
  codeVerifier: 'verifier-0123456789',
  nonce: 'nonce-1',
  issuer: 'https://issuer.example',
  redirectUri: 'https://app.example/auth/callback',
  returnTo: '/orders?page=2',
  browserBinding: 'binding-hash',
  createdAt: 1_700_000_000_000,
  correlationId: 'login-7',
};

const limits = { perAddress: 3, total: 5 };

describe('Redis pending-authorization store', () => {
  let client: Redis;
  beforeAll(async () => {
    client = redisClient();
    await ready(client);
  });
  afterAll(async () => {
    await client.quit();
  });

  it('hands a saved login back exactly once, as it was saved, under the application prefix', async () => {
    const keyPrefix = uniquePrefix('pending');
    const store = new RedisPendingAuthorizationStore(client, { keyPrefix });
    await store.save('state-1', entry, 60_000);
    expect((await client.keys(`${keyPrefix}:*`)).sort()).toEqual(
      [
        `${keyPrefix}:oauth:{pending}:all`,
        `${keyPrefix}:oauth:{pending}:binding:binding-hash`,
        `${keyPrefix}:oauth:{pending}:state:state-1`,
      ].sort(),
    );
    const instance = new RedisPendingAuthorizationStore(client, { keyPrefix }); // another instance
    const taken = await Promise.all([instance.take('state-1'), store.take('state-1')]);
    expect(taken.filter((t) => t !== undefined)).toEqual([entry]);
    expect(await store.take('state-1')).toBeUndefined();
    expect(await store.take('never-saved')).toBeUndefined();
    expect(await client.keys(`${keyPrefix}:*`)).toEqual([]); // the index entries went with it
  });

  it('keys default to the nest-resilience prefix', async () => {
    const state = uniquePrefix('state');
    await new RedisPendingAuthorizationStore(client).save(state, { ...entry, browserBinding: state }, 60_000);
    expect(await client.exists(`nest-resilience:oauth:{pending}:state:${state}`)).toBe(1);
    expect(await new RedisPendingAuthorizationStore(client).take(state)).toEqual({ ...entry, browserBinding: state });
  });

  it('lets every key expire with the TTL, at least one millisecond', async () => {
    const keyPrefix = uniquePrefix('ttl');
    const store = new RedisPendingAuthorizationStore(client, { keyPrefix });
    await store.save('long', { ...entry, clientAddress: 'address-hash' }, 90_000.4, limits);
    const keys = await client.keys(`${keyPrefix}:*`);
    expect(keys).toHaveLength(4); // entry, binding, address index, overall index
    for (const key of keys) {
      const ttl = await client.pttl(key);
      expect(ttl).toBeGreaterThan(80_000);
      expect(ttl).toBeLessThanOrEqual(90_001);
    }
    await store.save('none', { ...entry, browserBinding: 'other' }, 0);
    expect(await client.pttl(`${keyPrefix}:oauth:{pending}:state:none`)).toBeLessThanOrEqual(1);
  });

  it('keeps one pending login per browser binding: 1000 saves from one browser leave one entry', async () => {
    const keyPrefix = uniquePrefix('binding');
    const store = new RedisPendingAuthorizationStore(client, { keyPrefix });
    for (let i = 0; i < 1_000; i++) {
      await store.save(`state-${i}`, { ...entry, clientAddress: 'address-hash' }, 60_000, limits);
    }
    expect(await client.keys(`${keyPrefix}:oauth:{pending}:state:*`)).toEqual([
      `${keyPrefix}:oauth:{pending}:state:state-999`,
    ]);
    expect(await client.zcard(`${keyPrefix}:oauth:{pending}:all`)).toBe(1);
    expect(await client.zcard(`${keyPrefix}:oauth:{pending}:address:address-hash`)).toBe(1);
    expect(await store.take('state-998')).toBeUndefined();
    expect(await store.take('state-999')).toMatchObject({ codeVerifier: entry.codeVerifier });
  });

  it('refuses past the per-address cap and past the overall cap, saying when a place frees up', async () => {
    const keyPrefix = uniquePrefix('caps');
    const store = new RedisPendingAuthorizationStore(client, { keyPrefix });
    const save = (i: number, address: string) =>
      store.save(
        `s-${address}-${i}`,
        { ...entry, browserBinding: `b-${address}-${i}`, clientAddress: address },
        60_000,
        limits,
      );
    for (let i = 0; i < 3; i++) await save(i, 'a');
    const perAddress = await save(3, 'a').catch((e: unknown) => e);
    expect(perAddress).toBeInstanceOf(PendingLoginLimitError);
    expect(perAddress).toMatchObject({ limit: 'address' });
    expect((perAddress as PendingLoginLimitError).retryAfter).toBeGreaterThan(50_000);
    for (let i = 0; i < 2; i++) await save(i, 'b');
    await expect(save(2, 'b')).rejects.toMatchObject({ limit: 'total' });
    // A completed login frees its places.
    await store.take('s-a-0');
    await expect(save(2, 'b')).resolves.toBeUndefined();
    expect(await client.zcard(`${keyPrefix}:oauth:{pending}:all`)).toBe(5);
  });

  it("counts the caps on Redis's clock, the one its keys expire by, whatever the application's clock says", async () => {
    const keyPrefix = uniquePrefix('caps-clock');
    // An application clock an hour behind (a fake one nobody advances, or a skewed host).
    const time = new FakeTimeProvider(Date.now() - 3_600_000);
    const store = new RedisPendingAuthorizationStore(client, { keyPrefix, timeProvider: time });
    const save = (i: number, ttl: number) =>
      store.save(`s-${i}`, { ...entry, browserBinding: `b-${i}`, clientAddress: 'a' }, ttl, limits);
    await save(0, 60_000); // keeps the address's index alive
    for (let i = 1; i < 3; i++) await save(i, 50);
    // Gone in Redis after their 50 ms: they no longer take a place, though the application's clock is behind.
    await new Promise((resolve) => setTimeout(resolve, 120));
    await expect(save(3, 60_000)).resolves.toBeUndefined();
    await expect(save(4, 60_000)).resolves.toBeUndefined();
    const refused = (await save(5, 60_000).catch((e: unknown) => e)) as PendingLoginLimitError;
    expect(refused).toMatchObject({ limit: 'address' });
    // When a place frees up, in Redis's time: under a minute, not an hour more.
    expect(refused.retryAfter).toBeGreaterThan(50_000);
    expect(refused.retryAfter).toBeLessThanOrEqual(60_000);
  });

  it('fails with PendingStoreUnavailableError (and a Retry-After) when Redis does not answer, then fails fast', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as { port: number }).port;
    await new Promise((resolve) => closed.close(resolve));
    const down = redisClient({ url: `redis://127.0.0.1:${port}`, retryDelay: 1_000 });
    down.on('error', () => undefined);
    try {
      const time = new FakeTimeProvider(Date.now());
      const store = new RedisPendingAuthorizationStore(down, { retryInterval: 5_000, timeProvider: time });
      let asked = 0;
      const eval_ = down.eval.bind(down);
      (down as unknown as { eval: unknown }).eval = (...args: Parameters<typeof eval_>) => (asked++, eval_(...args));
      const first = (await store.save('s', entry, 60_000, limits).catch((e: unknown) => e)) as Error;
      expect(first).toBeInstanceOf(PendingStoreUnavailableError);
      expect(first.message).toBe('Redis pending-login store unavailable');
      expect(first.name).toBe('PendingStoreUnavailableError');
      expect((first as PendingStoreUnavailableError).retryAfter).toBe(5_000);
      expect(first.cause).toBeInstanceOf(Error); // what Redis said, for the log; never in a public body
      expect(asked).toBe(1);
      // Within retryInterval: at once, without asking Redis, saying how long is left.
      time.advance(2_000);
      const second = (await store.take('s').catch((e: unknown) => e)) as PendingStoreUnavailableError;
      expect(second).toBeInstanceOf(PendingStoreUnavailableError);
      expect(second.message).toBe('Redis pending-login store unavailable');
      expect(second.retryAfter).toBe(3_000);
      time.advance(2_999);
      expect(((await store.take('s').catch((e: unknown) => e)) as PendingStoreUnavailableError).retryAfter).toBe(1);
      expect(asked).toBe(1);
      // Then Redis is asked again.
      time.advance(1);
      const third = (await store.take('s').catch((e: unknown) => e)) as PendingStoreUnavailableError;
      expect(asked).toBe(2);
      expect(third.retryAfter).toBe(5_000);
    } finally {
      down.disconnect();
    }
  });

  it('gives up on a Redis that accepts and never answers after its operation timeout', async () => {
    // Answers the client's handshake, then goes silent: commands are sent and never answered.
    let answering = true;
    const sockets: Socket[] = [];
    const silent = createServer((socket) => {
      sockets.push(socket.on('error', () => undefined));
      socket.on('data', (data) => {
        if (answering) for (const _ of data.toString().matchAll(/\*\d+\r\n/g)) socket.write('+OK\r\n');
      });
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as { port: number }).port;
    const hung = new Redis(`redis://127.0.0.1:${port}`, { maxRetriesPerRequest: 0, retryStrategy: () => 1_000 });
    hung.on('error', () => undefined);
    try {
      await new Promise<void>((resolve) => hung.once('ready', () => resolve()));
      answering = false;
      const store = new RedisPendingAuthorizationStore(hung, { operationTimeout: 200 }); // the default clock
      const started = performance.now();
      const error = await store.save('s', entry, 60_000, limits).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(PendingStoreUnavailableError);
      expect(performance.now() - started).toBeLessThan(5_000);
    } finally {
      hung.disconnect();
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });
});
