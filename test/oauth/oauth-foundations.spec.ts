import { afterAll, describe, expect, it } from '@jest/globals';
import type { Redis } from 'ioredis';
import {
  calculateCodeChallenge,
  CODE_VERIFIER_PATTERN,
  generateCodeVerifier,
  generateOpaqueToken,
  handleTransientTokenFailure,
  InMemoryPendingAuthorizationStore,
  type PendingAuthorization,
  type PendingAuthorizationStore,
} from '../../src/oauth/index.js';
import { outcomeFromError, outcomeFromValue, TimeoutRejectedError } from '../../src/index.js';
import { RedisPendingAuthorizationStore } from '../../src/redis/index.js';
import { FakeTimeProvider } from '../../src/testing/index.js';
import { networkError } from '../utils/flaky.js';
import { ready, redisClient, uniquePrefix } from '../redis/redis-test.utils.js';

const entry: PendingAuthorization = {
  codeVerifier: 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk',
  nonce: 'n',
  issuer: 'http://127.0.0.1:4000',
  redirectUri: 'http://127.0.0.1:3000/auth/callback',
  browserBinding: 'b',
  createdAt: 0,
};

describe('PKCE (RFC 7636)', () => {
  it('computes the S256 challenge of Appendix B', () => {
    const octets = Buffer.from([
      116, 24, 223, 180, 151, 153, 224, 37, 79, 250, 96, 125, 216, 173, 187, 186, 22, 212, 37, 77, 105, 214, 191, 240,
      91, 88, 5, 88, 83, 132, 141, 121,
    ]);
    const verifier = octets.toString('base64url');
    expect(verifier).toBe('dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk');
    expect(calculateCodeChallenge(verifier)).toBe('E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM');
  });

  it('makes 43-character verifiers of unreserved characters, never twice the same', () => {
    const verifiers = new Set(Array.from({ length: 1_000 }, () => generateCodeVerifier()));
    expect(verifiers.size).toBe(1_000);
    for (const v of verifiers) expect(v).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(generateOpaqueToken()).toHaveLength(43); // 256 bits: state and nonce need at least 128
  });

  it('refuses verifiers outside the RFC grammar', () => {
    expect(() => calculateCodeChallenge('too-short')).toThrow(RangeError);
    expect(() => calculateCodeChallenge('a'.repeat(129))).toThrow(RangeError);
    expect(() => calculateCodeChallenge(`${'a'.repeat(42)}+`)).toThrow(RangeError);
    expect(CODE_VERIFIER_PATTERN.test('a'.repeat(128))).toBe(true);
  });
});

describe('token-endpoint failures', () => {
  const classify = (error: unknown) => handleTransientTokenFailure({ outcome: outcomeFromError(error) });

  it('retries network failures, timeouts, 5xx and 429', () => {
    expect(classify(networkError('ECONNREFUSED'))).toBe(true);
    expect(classify(new TypeError('fetch failed'))).toBe(true);
    expect(classify(new TimeoutRejectedError(5_000))).toBe(true);
    expect(classify(Object.assign(new Error('bad gateway'), { status: 502 }))).toBe(true);
    expect(classify(Object.assign(new Error('slow down'), { cause: { status: 429 } }))).toBe(true);
  });

  it('never retries (nor counts) OAuth error answers, whatever their status', () => {
    for (const code of [
      'invalid_grant',
      'invalid_client',
      'invalid_request',
      'unauthorized_client',
      'unsupported_grant_type',
      'invalid_scope',
    ]) {
      expect(classify(Object.assign(new Error(code), { error: code, status: 400 }))).toBe(false);
    }
    expect(classify(Object.assign(new Error('invalid_client'), { error: 'invalid_client', status: 500 }))).toBe(false);
    expect(classify(Object.assign(new Error('not found'), { status: 404 }))).toBe(false);
    expect(handleTransientTokenFailure({ outcome: outcomeFromValue({ status: 503 }) })).toBe(false);
  });
});

describe('pending authorization stores', () => {
  const clients: Redis[] = [];
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.quit()));
  });

  const stores: [string, () => Promise<{ store: PendingAuthorizationStore; expire: (ms: number) => Promise<void> }>][] =
    [
      [
        'in-memory',
        async () => {
          const time = new FakeTimeProvider();
          return { store: new InMemoryPendingAuthorizationStore(time), expire: async (ms) => time.advance(ms) };
        },
      ],
      [
        'Redis',
        async () => {
          const client = redisClient();
          clients.push(client);
          await ready(client);
          const keyPrefix = uniquePrefix('oauth');
          return {
            store: new RedisPendingAuthorizationStore(client, { keyPrefix }),
            // Redis expires keys on its own clock: round trips until the 1 ms TTL has passed there.
            expire: async () => {
              for (
                let i = 0;
                i < 1_000 && (await client.exists(`${keyPrefix}:oauth:{pending}:state:short`)) === 1;
                i++
              );
            },
          };
        },
      ],
    ];

  for (const [name, make] of stores) {
    describe(name, () => {
      it('gives an entry back once, and only once', async () => {
        const { store } = await make();
        await store.save('s1', entry, 60_000);
        await expect(store.take('s1')).resolves.toEqual(entry);
        await expect(store.take('s1')).resolves.toBeUndefined();
        await expect(store.take('unknown')).resolves.toBeUndefined();
      });

      it('lets exactly one of 50 concurrent callbacks take an entry', async () => {
        const { store } = await make();
        await store.save('race', entry, 60_000);
        const taken = await Promise.all(Array.from({ length: 50 }, () => store.take('race')));
        expect(taken.filter((t) => t !== undefined)).toHaveLength(1);
      });

      it('forgets an entry after its TTL', async () => {
        const { store, expire } = await make();
        await store.save('short', entry, 1);
        await expire(5);
        await expect(store.take('short')).resolves.toBeUndefined();
      });
    });
  }
});
