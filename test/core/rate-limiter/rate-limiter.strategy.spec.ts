import { describe, expect, it, jest } from '@jest/globals';
import { getEventListeners } from 'node:events';
import {
  ConcurrencyLimiter,
  RateLimiterRejectedError,
  ResilienceContext,
  ResiliencePipelineBuilder,
  ResiliencePropertyKey,
  TimeoutRejectedError,
  TokenBucketRateLimiter,
} from '../../../src/core.entry.js';
import { FakeTimeProvider } from '../../../src/testing/index.js';
import { deferred } from '../../utils/flaky.js';

const ok = () => 'ok';

async function outcomes(promises: Promise<unknown>[]): Promise<string[]> {
  return Promise.all(
    promises.map((p) =>
      p.then(
        (v) => String(v),
        (e: unknown) =>
          e instanceof RateLimiterRejectedError ? `rejected:${e.retryAfter}` : `error:${(e as Error).message}`,
      ),
    ),
  );
}

describe('rate limiter strategy', () => {
  describe('token bucket', () => {
    it('admits a burst up to the bucket size, then refills exactly tokensPerPeriod each period', async () => {
      const time = new FakeTimeProvider();
      const pipeline = new ResiliencePipelineBuilder({ timeProvider: time })
        .addRateLimiter({ kind: 'token-bucket', tokenLimit: 3, tokensPerPeriod: 2, replenishmentPeriod: 1_000 })
        .build();
      expect(await outcomes([1, 2, 3, 4].map(() => pipeline.execute(ok)))).toEqual(['ok', 'ok', 'ok', 'rejected:1000']);
      time.advance(999);
      expect(await outcomes([pipeline.execute(ok)])).toEqual(['rejected:1']);
      time.advance(1);
      expect(await outcomes([1, 2, 3].map(() => pipeline.execute(ok)))).toEqual(['ok', 'ok', 'rejected:1000']);
      time.advance(5_000); // refills to the limit, not beyond
      expect(await outcomes([1, 2, 3, 4].map(() => pipeline.execute(ok)))).toEqual(['ok', 'ok', 'ok', 'rejected:1000']);
    });

    it('queues up to queueLimit callers and serves them in order as tokens come back', async () => {
      const time = new FakeTimeProvider();
      const limiter = new TokenBucketRateLimiter({ tokenLimit: 1, replenishmentPeriod: 100, queueLimit: 2 }, time);
      const pipeline = new ResiliencePipelineBuilder({ timeProvider: time }).addRateLimiter({ limiter }).build();
      const order: number[] = [];
      const calls = [1, 2, 3, 4].map((i) => pipeline.execute(() => void order.push(i)));
      const settled = outcomes(calls);
      await time.advanceAsync(0);
      expect(order).toEqual([1]);
      await time.advanceAsync(100);
      expect(order).toEqual([1, 2]);
      await time.advanceAsync(100);
      expect(order).toEqual([1, 2, 3]);
      expect((await settled)[3]).toMatch(/^rejected:/);
      expect(time.pendingTimerCount).toBe(0);
    });
  });

  describe('fixed window', () => {
    it('admits permitLimit calls per window and tells when the next window opens', async () => {
      const time = new FakeTimeProvider();
      const pipeline = new ResiliencePipelineBuilder({ timeProvider: time })
        .addRateLimiter({ kind: 'fixed-window', permitLimit: 2, window: 1_000 })
        .build();
      time.advance(0);
      expect(await outcomes([1, 2, 3].map(() => pipeline.execute(ok)))).toEqual(['ok', 'ok', 'rejected:1000']);
      time.advance(400);
      expect(await outcomes([pipeline.execute(ok)])).toEqual(['rejected:600']);
      time.advance(600);
      expect(await outcomes([1, 2, 3].map(() => pipeline.execute(ok)))).toEqual(['ok', 'ok', 'rejected:1000']);
    });
  });

  describe('sliding window', () => {
    it('gives permits back as the segments they were taken in leave the window', async () => {
      const time = new FakeTimeProvider();
      const pipeline = new ResiliencePipelineBuilder({ timeProvider: time })
        .addRateLimiter({ kind: 'sliding-window', permitLimit: 4, window: 1_000, segmentsPerWindow: 4 })
        .build();
      expect(await outcomes([1, 2].map(() => pipeline.execute(ok)))).toEqual(['ok', 'ok']); // segment 0
      time.advance(500);
      expect(await outcomes([1, 2, 3].map(() => pipeline.execute(ok)))).toEqual(['ok', 'ok', 'rejected:500']); // segment 2
      time.advance(499);
      expect(await outcomes([pipeline.execute(ok)])).toEqual(['rejected:1']);
      time.advance(1); // segment 0 leaves the window: two permits back
      expect(await outcomes([1, 2, 3].map(() => pipeline.execute(ok)))).toEqual(['ok', 'ok', 'rejected:500']);
    });
  });

  describe('concurrency limiter', () => {
    it(`never runs more than permitLimit of 10,000 concurrent callers, and releases every permit`, async () => {
      const time = new FakeTimeProvider();
      const limiter = new ConcurrencyLimiter({ permitLimit: 100, queueLimit: 10_000 });
      const pipeline = new ResiliencePipelineBuilder({ timeProvider: time })
        .addRateLimiter({ limiter })
        .addTimeout(50)
        .build();
      let running = 0;
      let maxRunning = 0;
      const controllers: AbortController[] = [];
      const calls = Array.from({ length: 10_000 }, (_, i) => {
        const controller = new AbortController();
        controllers.push(controller);
        return pipeline.execute(
          async (ctx) => {
            running++;
            maxRunning = Math.max(maxRunning, running);
            try {
              await Promise.resolve();
              if (i % 4 === 0) return 'ok';
              if (i % 4 === 1) throw new Error('failed');
              return await time.delay(i % 4 === 2 ? 1_000 : 10, ctx.signal); // times out / aborted below
            } finally {
              running--;
            }
          },
          { signal: controller.signal },
        );
      });
      for (let i = 3; i < 10_000; i += 4) controllers[i].abort(new Error('aborted'));
      const settled = outcomes(calls);
      for (let step = 0; step < 300 && running + limiter.queuedCount > 0; step++) await time.advanceAsync(50);
      const results = await settled;
      expect(maxRunning).toBe(100);
      expect(results.filter((r) => r === 'ok')).toHaveLength(2_500);
      expect(results.filter((r) => r === 'error:failed')).toHaveLength(2_500);
      expect(results.filter((r) => r.startsWith('error:The operation did not complete'))).toHaveLength(2_500);
      expect(results.filter((r) => r === 'error:aborted')).toHaveLength(2_500);
      expect(limiter.availablePermits).toBe(100);
      expect(limiter.queuedCount).toBe(0);
      expect(controllers.every((c) => getEventListeners(c.signal, 'abort').length === 0)).toBe(true);
    }, 30_000); // 10,000 calls: seconds under load or mutation testing

    it('lets a queued caller whose signal aborts leave at once, without starving the others', async () => {
      const limiter = new ConcurrencyLimiter({ permitLimit: 1, queueLimit: 2 });
      const pipeline = new ResiliencePipelineBuilder().addRateLimiter({ limiter }).build();
      const gate = deferred<string>();
      const first = pipeline.execute(() => gate.promise);
      const controller = new AbortController();
      const leaving = pipeline.execute(ok, { signal: controller.signal });
      const waiting = pipeline.execute(() => 'second in line');
      expect(limiter.queuedCount).toBe(2);
      controller.abort(new Error('no longer needed'));
      await expect(leaving).rejects.toThrow('no longer needed');
      expect(limiter.queuedCount).toBe(1);
      // The freed queue place can be taken again.
      const third = pipeline.execute(() => 'third');
      gate.resolve('first');
      await expect(Promise.all([first, waiting, third])).resolves.toEqual(['first', 'second in line', 'third']);
    });

    it('rejects beyond the queue with RateLimiterRejectedError (429-mappable)', async () => {
      const pipeline = new ResiliencePipelineBuilder().addConcurrencyLimiter(1, 0).build();
      const gate = deferred<string>();
      const first = pipeline.execute(() => gate.promise);
      await expect(pipeline.execute(ok)).rejects.toBeInstanceOf(RateLimiterRejectedError);
      gate.resolve('done');
      await first;
      await expect(pipeline.execute(ok)).resolves.toBe('ok');
    });

    it('releases the permit of a call that timed out', async () => {
      const time = new FakeTimeProvider();
      const limiter = new ConcurrencyLimiter({ permitLimit: 1 });
      const pipeline = new ResiliencePipelineBuilder({ timeProvider: time })
        .addRateLimiter({ limiter })
        .addTimeout(10)
        .build();
      const call = pipeline.execute((ctx) => time.delay(1_000, ctx.signal));
      const timedOut = expect(call).rejects.toBeInstanceOf(TimeoutRejectedError);
      await time.advanceAsync(10);
      await timedOut;
      expect(limiter.availablePermits).toBe(1);
    });
  });

  it('partitions by a key from the context, one limiter per key', async () => {
    const time = new FakeTimeProvider();
    const User = new ResiliencePropertyKey<string>('user');
    const pipeline = new ResiliencePipelineBuilder({ timeProvider: time })
      .addRateLimiter({
        kind: 'fixed-window',
        permitLimit: 1,
        window: 1_000,
        partitionKey: (ctx) => ctx.properties.get(User) ?? 'anonymous',
      })
      .build();
    const as = (user: string) => {
      const ctx = new ResilienceContext();
      ctx.properties.set(User, user);
      return pipeline.execute(ok, ctx);
    };
    expect(await outcomes([as('ann'), as('bob'), as('ann')])).toEqual(['ok', 'ok', 'rejected:1000']);
  });

  it('chains limits: every one must admit, and the longest retry-after wins', async () => {
    const time = new FakeTimeProvider();
    const pipeline = new ResiliencePipelineBuilder({ timeProvider: time })
      .addRateLimiter({
        limits: [
          { kind: 'fixed-window', permitLimit: 2, window: 1_000 },
          { kind: 'fixed-window', permitLimit: 3, window: 60_000 },
        ],
      })
      .build();
    expect(await outcomes([1, 2, 3].map(() => pipeline.execute(ok)))).toEqual(['ok', 'ok', 'rejected:1000']);
    time.advance(1_000);
    expect(await outcomes([1, 2].map(() => pipeline.execute(ok)))).toEqual(['ok', 'rejected:59000']);
  });

  it('calls onRejected with the retry-after before rejecting, and reports telemetry', async () => {
    const onRejected = jest.fn<(args: { retryAfter: number | undefined }) => void>();
    const pipeline = new ResiliencePipelineBuilder()
      .addRateLimiter({ kind: 'fixed-window', permitLimit: 1, window: 5_000, onRejected })
      .build();
    await pipeline.execute(ok);
    await expect(pipeline.execute(ok)).rejects.toMatchObject({ name: 'RateLimiterRejectedError' });
    expect(onRejected).toHaveBeenCalledWith(expect.objectContaining({ retryAfter: expect.any(Number) }));
  });

  it('validates every limit definition', () => {
    expect(() =>
      new ResiliencePipelineBuilder()
        .addRateLimiter({ kind: 'token-bucket', tokenLimit: 0 } as never)
        .addRateLimiter({ kind: 'fixed-window', permitLimit: 1, window: 1, tokenLimit: 3 })
        .addRateLimiter({ limits: [{ kind: 'sliding-windows' } as never] })
        .build(),
    ).toThrow(
      /strategies\[0\] \(rate-limiter\)\.replenishmentPeriod: undefined is required[\s\S]*tokenLimit: 0 must be an integer >= 1[\s\S]*strategies\[1\] \(rate-limiter\)\.tokenLimit: 3 does not apply to kind "fixed-window"[\s\S]*limits\[0\]\.kind: "sliding-windows" must be one of/,
    );
  });
});
