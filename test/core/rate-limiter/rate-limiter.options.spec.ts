import { describe, expect, it, jest } from '@jest/globals';
import {
  ConcurrencyLimiter,
  createRateLimiter,
  DEFAULT_RATE_LIMIT,
  FixedWindowRateLimiter,
  OptionsValidator,
  ResilienceContext,
  ResiliencePipelineBuilder,
  ResiliencePipelineRegistry,
  SlidingWindowRateLimiter,
  TokenBucketRateLimiter,
} from '../../../src/core.entry.js';
import { FakeTimeProvider } from '../../../src/testing/index.js';
import { deferred } from '../../utils/flaky.js';
import { strategyProblems } from '../../utils/validation-problems.js';

const problems = (options: object) => strategyProblems('rate-limiter', (b) => b.addRateLimiter(options));

const fakeLimiter = { acquire: () => ({ acquired: true, release: () => undefined }), isIdle: () => true, dispose() {} };

describe('rate limiter options', () => {
  it('accepts each kind with its fields, a chain, a limiter of one own, and nothing', () => {
    for (const options of [
      {},
      { kind: 'token-bucket', tokenLimit: 1, replenishmentPeriod: 1, tokensPerPeriod: 1, queueLimit: 0 },
      { kind: 'fixed-window', permitLimit: 1, window: 1, queueLimit: 3 },
      { kind: 'sliding-window', permitLimit: 1, window: 1, segmentsPerWindow: 1_000 },
      { kind: 'concurrency', permitLimit: 1 },
      { kind: 'token-bucket', tokenLimit: 1, replenishmentPeriod: 1, distributed: true },
      { kind: 'sliding-window', permitLimit: 1, window: 1, distributed: true },
      { kind: 'sliding-window', permitLimit: 1, window: 1, distributed: false },
      { limits: [{ kind: 'concurrency', permitLimit: 2, queueLimit: 1 }] },
      { limiter: fakeLimiter, name: 'mine', onRejected: () => undefined, partitionKey: () => 'k' },
    ]) {
      expect(problems(options)).toEqual([]);
    }
  });

  it('checks the types of the general options', () => {
    expect(
      problems({
        name: 3,
        partitionKey: 'user',
        onRejected: true,
        distributed: 'yes',
        bogus: 1,
        kind: 'token-bucket',
        tokenLimit: 1,
        replenishmentPeriod: 1,
      }),
    ).toEqual([
      { path: 'bogus', rule: 'is not a known option' },
      { path: 'name', rule: 'must be a non-empty string' },
      { path: 'partitionKey', rule: 'must be a function' },
      { path: 'onRejected', rule: 'must be a function' },
      { path: 'distributed', rule: 'must be a boolean' },
    ]);
  });

  it('shares a limit between processes only for the token bucket and the sliding window', () => {
    const rule = 'applies to kind "token-bucket" or "sliding-window"';
    expect(problems({ kind: 'fixed-window', permitLimit: 1, window: 1, distributed: true })).toEqual([
      { path: 'distributed', rule },
    ]);
    expect(problems({ kind: 'concurrency', permitLimit: 1, distributed: true })).toEqual([
      { path: 'distributed', rule },
    ]);
    expect(problems({ distributed: true })).toEqual([{ path: 'distributed', rule }]);
    expect(problems({ kind: 'concurrency', permitLimit: 1, distributed: false })).toEqual([]);
  });

  it('takes one of kind, limits and limiter', () => {
    const limits = [{ kind: 'concurrency', permitLimit: 1 }];
    expect(problems({ kind: 'concurrency', permitLimit: 1, limits })).toEqual([
      { path: 'limits', rule: 'cannot be combined with kind' },
    ]);
    expect(problems({ kind: 'concurrency', permitLimit: 1, limiter: fakeLimiter })).toEqual([
      { path: 'limiter', rule: 'cannot be combined with kind' },
    ]);
    expect(problems({ limits, limiter: fakeLimiter })).toEqual([
      { path: 'limiter', rule: 'cannot be combined with limits' },
    ]);
    expect(problems({ kind: 'concurrency', permitLimit: 1, limits, limiter: fakeLimiter })).toEqual([
      { path: 'limits', rule: 'cannot be combined with kind' },
    ]);
  });

  it('names the option given second, with a placeholder for its value', () => {
    let error: unknown;
    try {
      new ResiliencePipelineBuilder()
        .addRateLimiter({ kind: 'concurrency', permitLimit: 1, limiter: fakeLimiter } as never)
        .build();
    } catch (e) {
      error = e;
    }
    expect((error as { issues: unknown[] }).issues).toEqual([
      { path: 'strategies[0] (rate-limiter).limiter', value: '(given)', rule: 'cannot be combined with kind' },
    ]);
  });

  it('wants a limiter to be a RateLimiter', () => {
    expect(problems({ limiter: {} })).toEqual([{ path: 'limiter', rule: 'must be a RateLimiter' }]);
    expect(problems({ limiter: { acquire: 1 } })).toEqual([{ path: 'limiter', rule: 'must be a RateLimiter' }]);
  });

  it('wants limits to be a non-empty array of definitions, each checked under its index', () => {
    expect(problems({ limits: [] })).toEqual([{ path: 'limits', rule: 'must be a non-empty array' }]);
    expect(problems({ limits: { kind: 'concurrency' } })).toEqual([
      { path: 'limits', rule: 'must be a non-empty array' },
    ]);
    expect(
      problems({
        limits: [
          { kind: 'fixed-window', permitLimit: 1, window: 1 },
          { kind: 'fixed-window', permitLimit: 0, tokenLimit: 2 },
          { kind: 'leaky-bucket' },
        ],
      }),
    ).toEqual([
      { path: 'limits[1].tokenLimit', rule: 'is not a known option' },
      { path: 'limits[1].window', rule: 'is required' },
      { path: 'limits[1].permitLimit', rule: 'must be an integer >= 1' },
      {
        path: 'limits[2].kind',
        rule: 'must be one of "token-bucket", "fixed-window", "sliding-window", "concurrency"',
      },
    ]);
  });

  it('wants a kind for the fields of a limit', () => {
    expect(problems({ permitLimit: 2, window: 1_000, queueLimit: 1 })).toEqual([
      { path: 'permitLimit', rule: 'needs a kind' },
      { path: 'window', rule: 'needs a kind' },
      { path: 'queueLimit', rule: 'needs a kind' },
    ]);
    expect(problems({ limiter: fakeLimiter, permitLimit: 2 })).toEqual([]);
  });

  it.each([
    ['token-bucket', ['tokenLimit', 'replenishmentPeriod']],
    ['fixed-window', ['permitLimit', 'window']],
    ['sliding-window', ['permitLimit', 'window']],
    ['concurrency', ['permitLimit']],
  ])('requires the fields of kind %s', (kind, required) => {
    expect(problems({ kind })).toEqual(required.map((path) => ({ path, rule: 'is required' })));
  });

  it('names the fields that do not apply to the kind given', () => {
    expect(
      problems({ kind: 'concurrency', permitLimit: 1, window: 5, tokensPerPeriod: 2, segmentsPerWindow: 2 }),
    ).toEqual([
      { path: 'window', rule: 'does not apply to kind "concurrency"' },
      { path: 'segmentsPerWindow', rule: 'does not apply to kind "concurrency"' },
      { path: 'tokensPerPeriod', rule: 'does not apply to kind "concurrency"' },
    ]);
    expect(problems({ kind: 'token-bucket', tokenLimit: 1, replenishmentPeriod: 1, permitLimit: 1 })).toEqual([
      { path: 'permitLimit', rule: 'does not apply to kind "token-bucket"' },
    ]);
  });

  it.each(['leaky', 'constructor', '__proto__', 'toString', 5])('refuses kind %p', (kind) => {
    expect(problems({ kind })).toEqual([
      { path: 'kind', rule: 'must be one of "token-bucket", "fixed-window", "sliding-window", "concurrency"' },
    ]);
  });

  it('checks the ranges of every field', () => {
    expect(
      problems({ kind: 'token-bucket', tokenLimit: 0.5, replenishmentPeriod: 0, tokensPerPeriod: 0, queueLimit: -1 }),
    ).toEqual([
      { path: 'tokenLimit', rule: 'must be an integer >= 1' },
      { path: 'tokensPerPeriod', rule: 'must be an integer >= 1' },
      { path: 'queueLimit', rule: 'must be an integer >= 0' },
      { path: 'replenishmentPeriod', rule: 'must be a number >= 1 and <= 2147483647' },
    ]);
    expect(problems({ kind: 'sliding-window', permitLimit: 1.5, window: 0, segmentsPerWindow: 1_001 })).toEqual([
      { path: 'permitLimit', rule: 'must be an integer >= 1' },
      { path: 'segmentsPerWindow', rule: 'must be an integer >= 1 and <= 1000' },
      { path: 'window', rule: 'must be a number >= 1 and <= 2147483647' },
    ]);
    expect(
      problems({
        kind: 'token-bucket',
        tokenLimit: 2.5,
        replenishmentPeriod: 1,
        tokensPerPeriod: 1.5,
        queueLimit: 0.5,
      }),
    ).toEqual([
      { path: 'tokenLimit', rule: 'must be an integer >= 1' },
      { path: 'tokensPerPeriod', rule: 'must be an integer >= 1' },
      { path: 'queueLimit', rule: 'must be an integer >= 0' },
    ]);
    expect(problems({ kind: 'sliding-window', permitLimit: 1, window: 1, segmentsPerWindow: 2.5 })).toEqual([
      { path: 'segmentsPerWindow', rule: 'must be an integer >= 1 and <= 1000' },
    ]);
    expect(problems({ kind: 'sliding-window', permitLimit: 1, window: 1, segmentsPerWindow: 0 })).toEqual([
      { path: 'segmentsPerWindow', rule: 'must be an integer >= 1 and <= 1000' },
    ]);
  });
});

describe('the limiter the options make', () => {
  it('is a concurrency limit of 1,000 calls without a queue when nothing is configured', async () => {
    expect(DEFAULT_RATE_LIMIT).toEqual({ kind: 'concurrency', permitLimit: 1_000, queueLimit: 0 });
    const pipeline = new ResiliencePipelineBuilder().addRateLimiter({}).build();
    const gate = deferred<void>();
    const running = Array.from({ length: 1_000 }, () => pipeline.execute(() => gate.promise));
    await expect(pipeline.execute(() => 'one more')).rejects.toMatchObject({ name: 'RateLimiterRejectedError' });
    gate.resolve();
    await Promise.all(running);
    await expect(pipeline.execute(() => 'now')).resolves.toBe('now');
  });

  it('creates each kind from its definition', () => {
    const time = new FakeTimeProvider();
    expect(createRateLimiter({ kind: 'token-bucket', tokenLimit: 1, replenishmentPeriod: 1 }, time)).toBeInstanceOf(
      TokenBucketRateLimiter,
    );
    expect(createRateLimiter({ kind: 'fixed-window', permitLimit: 1, window: 1 }, time)).toBeInstanceOf(
      FixedWindowRateLimiter,
    );
    expect(createRateLimiter({ kind: 'sliding-window', permitLimit: 1, window: 1 }, time)).toBeInstanceOf(
      SlidingWindowRateLimiter,
    );
    expect(createRateLimiter({ kind: 'concurrency', permitLimit: 1 }, time)).toBeInstanceOf(ConcurrencyLimiter);
  });

  it('does not partition a limiter of one own: it is used as given', async () => {
    const keys: string[] = [];
    const limiter = new ConcurrencyLimiter({ permitLimit: 1 });
    const pipeline = new ResiliencePipelineBuilder()
      .addRateLimiter({ limiter, partitionKey: (ctx) => (keys.push('asked'), String(ctx.operationKey)) })
      .build();
    const gate = deferred<string>();
    const first = pipeline.execute(() => gate.promise, new ResilienceContext({ operationKey: 'a' }));
    await expect(pipeline.execute(() => 'b', new ResilienceContext({ operationKey: 'b' }))).rejects.toMatchObject({
      name: 'RateLimiterRejectedError',
    });
    expect(keys).toEqual([]);
    gate.resolve('a');
    await first;
  });

  it('in configuration, a limiter of one own is used as given, and a shared one keeps name and onRejected', async () => {
    const acquired: string[] = [];
    const own = new ConcurrencyLimiter({ permitLimit: 1 });
    const mine = {
      acquire: (c: ResilienceContext) => (acquired.push('mine'), own.acquire(c)),
      isIdle: () => own.isIdle(),
      dispose: jest.fn(() => own.dispose()),
    };
    const rejected: (number | undefined)[] = [];
    const registry = new ResiliencePipelineRegistry({
      pipelines: {
        own: { rateLimiter: { limiter: mine } },
        shared: {
          rateLimiter: {
            name: 'per-window',
            kind: 'fixed-window',
            permitLimit: 1,
            window: 60_000,
            onRejected: ({ retryAfter }) => void rejected.push(retryAfter),
          },
        },
      },
    });
    await registry.getPipeline('own').execute(() => 'ok');
    expect(acquired).toEqual(['mine']);
    await registry.getPipeline('shared').execute(() => 'ok');
    const error = await registry
      .getPipeline('shared')
      .execute(() => 'no')
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ name: 'RateLimiterRejectedError', source: { strategyName: 'per-window' } });
    expect(rejected).toHaveLength(1);
    await registry.dispose();
    expect(mine.dispose).not.toHaveBeenCalled(); // it is the user's to dispose
  });

  it('in configuration applied without a pipeline to share with, a limit section has a limiter of its own', async () => {
    const registry = new ResiliencePipelineRegistry();
    const methods = [1, 2].map(() => {
      const builder = registry.createBuilder<unknown>('Orders.list');
      const issues = new OptionsValidator('Orders.list');
      registry.applyConfig(builder, { rateLimiter: { kind: 'fixed-window', permitLimit: 1, window: 60_000 } }, issues);
      expect(issues.isValid).toBe(true);
      return builder.build();
    });
    // One permit each: the second method is admitted although the first used its own.
    await expect(methods[0].execute(() => 'first')).resolves.toBe('first');
    await expect(methods[1].execute(() => 'second')).resolves.toBe('second');
    await expect(methods[0].execute(() => 'again')).rejects.toMatchObject({ name: 'RateLimiterRejectedError' });
    await registry.dispose();
  });

  it('uses a single limit given in limits as it is: its queue shows in the statistics', async () => {
    const time = new FakeTimeProvider();
    const registry = new ResiliencePipelineRegistry({
      timeProvider: time,
      pipelines: {
        p: { rateLimiter: { limits: [{ kind: 'fixed-window', permitLimit: 1, window: 100, queueLimit: 1 }] } },
      },
    });
    const pipeline = registry.getPipeline('p');
    await pipeline.execute(() => 'first');
    const queued = pipeline.execute(() => 'queued');
    expect(registry.limiterStatistics()[0]).toMatchObject({ kind: 'chained', queueLength: 1 });
    await time.advanceAsync(100);
    await expect(queued).resolves.toBe('queued');
    await registry.dispose();
  });

  it('partitions a chain: every key gets its own chain of limits', async () => {
    const time = new FakeTimeProvider();
    const pipeline = new ResiliencePipelineBuilder({ timeProvider: time })
      .addRateLimiter({
        limits: [
          { kind: 'fixed-window', permitLimit: 2, window: 1_000 },
          { kind: 'fixed-window', permitLimit: 1, window: 1_000 },
        ],
        partitionKey: (ctx) => String(ctx.operationKey),
      })
      .build();
    const as = (key: string) =>
      pipeline.execute(() => key, new ResilienceContext({ operationKey: key })).catch((e: Error) => e.name);
    expect(await Promise.all([as('a'), as('a'), as('b')])).toEqual(['a', 'RateLimiterRejectedError', 'b']);
  });
});
