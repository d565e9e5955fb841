import { describe, expect, it, jest } from '@jest/globals';
import fc from 'fast-check';
import { getEventListeners } from 'node:events';
import {
  ChainedRateLimiter,
  ConcurrencyLimiter,
  FixedWindowRateLimiter,
  PartitionedRateLimiter,
  RateLimiterRejectedError,
  ResilienceContext,
  ResiliencePipelineBuilder,
  SlidingWindowRateLimiter,
  TokenBucketRateLimiter,
  TimeProvider,
  type RateLimiter,
  type RateLimitLease,
} from '../../../src/core.entry.js';
import { FakeTimeProvider } from '../../../src/testing/index.js';
import { deferred } from '../../utils/flaky.js';

const ctx = () => new ResilienceContext();

/** A lease, or what a queued acquisition settled to ("queued" while it waits). */
function state(result: RateLimitLease | Promise<RateLimitLease>): { value: string } {
  const seen = { value: 'queued' };
  if (result instanceof Promise) {
    result.then(
      (l) => (seen.value = l.acquired ? 'granted' : `rejected:${l.retryAfter}`),
      (e: Error) => (seen.value = `cancelled:${e.message}`),
    );
  } else {
    seen.value = result.acquired ? 'granted' : `rejected:${result.retryAfter}`;
  }
  return seen;
}

/** Takes a permit that is answered at once (granted or not), for a limiter whose queue is not involved. */
function take(limiter: RateLimiter, context = ctx()): RateLimitLease {
  const lease = limiter.acquire(context);
  if (lease instanceof Promise) throw new Error('expected an answer at once');
  return lease;
}

const flush = async () => {
  for (let i = 0; i < 5; i++) await Promise.resolve();
};

describe('ConcurrencyLimiter', () => {
  it('grants permits at once, queues behind them in order, and rejects beyond the queue', async () => {
    const limiter = new ConcurrencyLimiter({ permitLimit: 2, queueLimit: 2 });
    const leases = [limiter.acquire(ctx()), limiter.acquire(ctx())] as RateLimitLease[];
    expect(leases.map((l) => l.acquired)).toEqual([true, true]);
    expect(limiter.availablePermits).toBe(0);
    expect(limiter.isIdle()).toBe(false);
    const third = state(limiter.acquire(ctx()));
    const fourth = state(limiter.acquire(ctx()));
    expect(limiter.queuedCount).toBe(2);
    expect(state(limiter.acquire(ctx())).value).toBe('rejected:undefined');
    leases[0].release();
    leases[0].release(); // releasing twice gives one permit back
    await flush();
    expect([third.value, fourth.value]).toEqual(['granted', 'queued']);
    expect(limiter.availablePermits).toBe(0);
    leases[1].release();
    await flush();
    expect(fourth.value).toBe('granted');
    expect(limiter.queuedCount).toBe(0);
  });

  it('is idle only with every permit back and nobody queued', () => {
    const limiter = new ConcurrencyLimiter({ permitLimit: 2 });
    expect(limiter.isIdle()).toBe(true);
    expect(limiter.permitLimit).toBe(2);
    const lease = limiter.acquire(ctx()) as RateLimitLease;
    expect(limiter.isIdle()).toBe(false);
    lease.release();
    expect(limiter.isIdle()).toBe(true);
    expect(limiter.availablePermits).toBe(2);
  });

  it('cancels the queued callers on dispose, and queues nobody afterwards', async () => {
    const limiter = new ConcurrencyLimiter({ permitLimit: 1, queueLimit: 5 });
    take(limiter);
    const queued = state(limiter.acquire(ctx()));
    limiter.dispose();
    await flush();
    expect(queued.value).toBe('cancelled:The concurrency limiter was disposed.');
    expect(state(limiter.acquire(ctx())).value).toBe('rejected:undefined');
    expect(limiter.queuedCount).toBe(0);
  });

  it('serves more than a thousand waiters in arrival order', async () => {
    const limiter = new ConcurrencyLimiter({ permitLimit: 1, queueLimit: 3_000 });
    const pipeline = new ResiliencePipelineBuilder().addRateLimiter({ limiter }).build();
    const order: number[] = [];
    const gate = deferred<void>();
    const first = pipeline.execute(() => gate.promise);
    const calls = Array.from({ length: 2_500 }, (_, i) => pipeline.execute(() => void order.push(i)));
    gate.resolve();
    await Promise.all([first, ...calls]);
    expect(order).toEqual(Array.from({ length: 2_500 }, (_, i) => i));
    expect(limiter.availablePermits).toBe(1);
  });

  it('lets a waiter that left go at once, and removes its abort listener when it is served or cancelled', async () => {
    const limiter = new ConcurrencyLimiter({ permitLimit: 1, queueLimit: 3 });
    const held = limiter.acquire(ctx()) as RateLimitLease;
    const leaving = new AbortController();
    const served = new AbortController();
    const disposed = new AbortController();
    const a = state(limiter.acquire(new ResilienceContext({ signal: leaving.signal })));
    const b = state(limiter.acquire(new ResilienceContext({ signal: served.signal })));
    leaving.abort(new Error('gone'));
    await flush();
    expect(a.value).toBe('cancelled:gone');
    expect(limiter.queuedCount).toBe(1);
    held.release();
    await flush();
    expect(b.value).toBe('granted');
    expect(getEventListeners(served.signal, 'abort')).toHaveLength(0);
    const c = state(limiter.acquire(new ResilienceContext({ signal: disposed.signal })));
    limiter.dispose();
    await flush();
    expect(c.value).toBe('cancelled:The concurrency limiter was disposed.');
    expect(getEventListeners(disposed.signal, 'abort')).toHaveLength(0);
    disposed.abort(new Error('late')); // no second settlement, nothing thrown
    await flush();
    expect(c.value).toBe('cancelled:The concurrency limiter was disposed.');
  });
  it('keeps the order of the others when callers leave from the front, the middle and the back', async () => {
    const limiter = new ConcurrencyLimiter({ permitLimit: 1, queueLimit: 6 });
    const pipeline = new ResiliencePipelineBuilder().addRateLimiter({ limiter }).build();
    const gate = deferred<void>();
    const running = pipeline.execute(() => gate.promise);
    const order: number[] = [];
    const controllers = [1, 2, 3, 4, 5].map(() => new AbortController());
    const calls = controllers.map((c, i) =>
      pipeline.execute(() => void order.push(i + 1), { signal: c.signal }).catch((e: Error) => e.message),
    );
    for (const i of [2, 4, 0]) controllers[i].abort(new Error(`left ${i + 1}`)); // the middle, the back, the front
    expect(limiter.queuedCount).toBe(2);
    const later = [6, 7].map((n) => pipeline.execute(() => void order.push(n)));
    expect(limiter.queuedCount).toBe(4);
    gate.resolve();
    await Promise.all([running, ...later]);
    expect(await Promise.all(calls)).toEqual(['left 1', undefined, 'left 3', undefined, 'left 5']);
    expect(order).toEqual([2, 4, 6, 7]);
    expect(limiter.availablePermits).toBe(1);
  });

  it('refuses at once a caller cancelled before it queues: it takes no place and starts no timer', async () => {
    const cancelled = new AbortController();
    cancelled.abort(new Error('cancelled already'));
    const limiter = new ConcurrencyLimiter({ permitLimit: 1, queueLimit: 1 });
    const held = take(limiter);
    const refused = state(limiter.acquire(new ResilienceContext({ signal: cancelled.signal })));
    await flush();
    expect(refused.value).toBe('cancelled:cancelled already');
    expect(limiter.queuedCount).toBe(0);
    expect(state(limiter.acquire(ctx())).value).toBe('queued'); // the place is still free

    const pipeline = new ResiliencePipelineBuilder().addConcurrencyLimiter(1, 1).build();
    const gate = deferred<void>();
    const running = pipeline.execute(() => gate.promise);
    await expect(pipeline.execute(() => 'never', { signal: cancelled.signal })).rejects.toThrow('cancelled already');
    const queued = pipeline.execute(() => 'queued');
    gate.resolve();
    await expect(queued).resolves.toBe('queued');
    await running;
    held.release();

    const time = new FakeTimeProvider();
    const window = new FixedWindowRateLimiter({ permitLimit: 1, window: 100, queueLimit: 1 }, time);
    take(window);
    const late = state(window.acquire(new ResilienceContext({ signal: cancelled.signal })));
    await flush();
    expect(late.value).toBe('cancelled:cancelled already');
    expect([window.queuedCount, time.pendingTimerCount]).toEqual([0, 0]);
  });

  it('a caller cancelled already takes no free permit, on every limiter and through a pipeline (property)', async () => {
    const cancelled = new AbortController();
    cancelled.abort(new Error('cancelled already'));
    const kinds = ['token-bucket', 'fixed-window', 'sliding-window', 'concurrency'] as const;
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...kinds),
        fc.integer({ min: 1, max: 5 }),
        fc.array(fc.boolean(), { minLength: 1, maxLength: 15 }),
        fc.boolean(),
        async (kind, permitLimit, callers, viaPipeline) => {
          const time = new FakeTimeProvider();
          const limiter: RateLimiter =
            kind === 'token-bucket'
              ? new TokenBucketRateLimiter({ tokenLimit: permitLimit, replenishmentPeriod: 60_000 }, time)
              : kind === 'fixed-window'
                ? new FixedWindowRateLimiter({ permitLimit, window: 60_000 }, time)
                : kind === 'sliding-window'
                  ? new SlidingWindowRateLimiter({ permitLimit, window: 60_000, segmentsPerWindow: 2 }, time)
                  : new ConcurrencyLimiter({ permitLimit });
          const pipeline = new ResiliencePipelineBuilder({ timeProvider: time }).addRateLimiter({ limiter }).build();
          // Each caller is cancelled already (true) or not; none gives a permit back, but a pipeline's call
          // that ran gives its concurrency permit back when it ends.
          const givesBack = kind === 'concurrency' && viaPipeline;
          let admitted = 0;
          for (const isCancelled of callers) {
            const options = isCancelled ? { signal: cancelled.signal } : {};
            const outcome = viaPipeline
              ? await pipeline
                  .execute(() => 'ran', options)
                  .then(
                    (value) => value,
                    (e: Error) => (e instanceof RateLimiterRejectedError ? 'rejected' : e.message),
                  )
              : await Promise.resolve(limiter.acquire(new ResilienceContext(options))).then(
                  (lease) => (lease.acquired ? 'ran' : 'rejected'),
                  (e: Error) => e.message,
                );
            if (isCancelled) expect(outcome).toBe('cancelled already');
            else expect(outcome).toBe(givesBack || admitted < permitLimit ? 'ran' : 'rejected');
            if (outcome === 'ran') admitted++;
          }
          if (kind === 'concurrency' && !viaPipeline) {
            expect((limiter as ConcurrencyLimiter).availablePermits).toBe(permitLimit - admitted);
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it('queues a caller whose context cannot be cancelled without giving it a signal or a listener', () => {
    const limiter = new ConcurrencyLimiter({ permitLimit: 1, queueLimit: 1 });
    take(limiter);
    const context = ctx();
    void limiter.acquire(context);
    expect(limiter.queuedCount).toBe(1);
    // Reading the signal now makes the context's first one: the queue never asked for it.
    expect(getEventListeners(context.signal, 'abort')).toHaveLength(0);
  });

  it('cancels the queued callers on dispose oldest first, and only those still waiting', async () => {
    const limiter = new ConcurrencyLimiter({ permitLimit: 1, queueLimit: 3 });
    take(limiter);
    const cancelled: string[] = [];
    const leaving = new AbortController();
    const waiting = ['a', 'b', 'c'].map((name) =>
      Promise.resolve(
        limiter.acquire(new ResilienceContext(name === 'b' ? { signal: leaving.signal } : undefined)),
      ).catch((e: Error) => void cancelled.push(`${name}: ${e.message}`)),
    );
    leaving.abort(new Error('left'));
    await flush();
    limiter.dispose();
    await Promise.all(waiting);
    expect(cancelled).toEqual([
      'b: left',
      'a: The concurrency limiter was disposed.',
      'c: The concurrency limiter was disposed.',
    ]);
  });
});

describe('time-based limiters', () => {
  it('token bucket: counts refills from the last refill, not from the call, and tells the wait for the queue', () => {
    const time = new FakeTimeProvider();
    const bucket = new TokenBucketRateLimiter({ tokenLimit: 2, tokensPerPeriod: 2, replenishmentPeriod: 1_000 }, time);
    expect(bucket.availableTokens).toBe(2);
    expect(bucket.isIdle()).toBe(true);
    expect(state(bucket.acquire(ctx())).value).toBe('granted');
    expect(bucket.isIdle()).toBe(false);
    expect(state(bucket.acquire(ctx())).value).toBe('granted');
    time.advance(1_500);
    expect(bucket.availableTokens).toBe(2);
    take(bucket);
    take(bucket);
    expect(state(bucket.acquire(ctx())).value).toBe('rejected:500'); // the next refill is at 2,000
    time.advance(500);
    expect(bucket.availableTokens).toBe(2);
    expect(bucket.isIdle()).toBe(true);
  });

  it('token bucket: a queued caller waits for as many periods as tokens are missing', () => {
    const time = new FakeTimeProvider();
    const bucket = new TokenBucketRateLimiter({ tokenLimit: 1, replenishmentPeriod: 100, queueLimit: 2 }, time);
    take(bucket);
    const one = state(bucket.acquire(ctx()));
    const two = state(bucket.acquire(ctx()));
    expect(bucket.queuedCount).toBe(2);
    expect(time.pendingTimerCount).toBe(1); // one timer, however many wait
    expect(state(bucket.acquire(ctx())).value).toBe('rejected:300');
    return (async () => {
      await time.advanceAsync(100);
      expect([one.value, two.value]).toEqual(['granted', 'queued']);
      expect(time.pendingTimerCount).toBe(1);
      await time.advanceAsync(100);
      expect(two.value).toBe('granted');
      expect(time.pendingTimerCount).toBe(0);
    })();
  });

  it('token bucket: serves several waiters at one refill', async () => {
    const time = new FakeTimeProvider();
    const bucket = new TokenBucketRateLimiter(
      { tokenLimit: 3, tokensPerPeriod: 3, replenishmentPeriod: 100, queueLimit: 3 },
      time,
    );
    for (let i = 0; i < 3; i++) take(bucket);
    const waiting = [state(bucket.acquire(ctx())), state(bucket.acquire(ctx()))];
    await time.advanceAsync(100);
    expect(waiting.map((w) => w.value)).toEqual(['granted', 'granted']);
    expect(bucket.availableTokens).toBe(1);
    expect(time.pendingTimerCount).toBe(0);
  });

  it('a newcomer never overtakes a queued caller, even with a permit free', async () => {
    const time = new FakeTimeProvider();
    const bucket = new TokenBucketRateLimiter({ tokenLimit: 1, replenishmentPeriod: 100, queueLimit: 2 }, time);
    let newcomer: { value: string } | undefined;
    // Due with the refill but started before the limiter's own timer, so it runs first: the token is
    // back, the queued caller not served yet (a real timer runs late the same way).
    time.setTimeout(() => (newcomer = state(bucket.acquire(ctx()))), 100);
    take(bucket);
    const first = state(bucket.acquire(ctx()));
    await time.advanceAsync(100);
    expect(newcomer?.value).toBe('queued');
    expect(first.value).toBe('granted');
    await time.advanceAsync(100);
    expect(newcomer?.value).toBe('granted');
  });

  it('token bucket: a caller refused behind a full queue is told when the queue leaves a token for it, counting the tokens back already', async () => {
    const time = new FakeTimeProvider();
    const bucket = new TokenBucketRateLimiter(
      { tokenLimit: 2, tokensPerPeriod: 2, replenishmentPeriod: 100, queueLimit: 3 },
      time,
    );
    let refused: { value: string } | undefined;
    // At the refill, before the limiter serves its queue: 2 tokens back, 3 callers waiting for them.
    time.setTimeout(() => (refused = state(bucket.acquire(ctx()))), 100);
    take(bucket);
    take(bucket);
    const queued = [1, 2, 3].map(() => state(bucket.acquire(ctx())));
    await time.advanceAsync(100);
    // The 2 tokens go to the first two; the third and the refused caller share the refill at 200.
    expect(refused?.value).toBe('rejected:100');
    expect(queued.map((q) => q.value)).toEqual(['granted', 'granted', 'queued']);
    await time.advanceAsync(100);
    expect(queued[2].value).toBe('granted');
    expect(state(bucket.acquire(ctx())).value).toBe('granted');
  });

  it('token bucket: a clock that steps back takes no token away and moves no refill earlier', () => {
    const fake = new FakeTimeProvider();
    let offset = 0;
    // The system clock (Date.now) can be set back; a limiter must survive it.
    const clock = new (class extends TimeProvider {
      now = () => fake.now() + offset;
      setTimeout = (callback: () => void, delay: number) => fake.setTimeout(callback, delay);
      clearTimeout = (handle: unknown) => fake.clearTimeout(handle);
    })();
    const bucket = new TokenBucketRateLimiter({ tokenLimit: 2, replenishmentPeriod: 1_000 }, clock);
    fake.advance(5_000);
    take(bucket); // the first refill is counted from now, 5,000
    offset = -2_500;
    expect(bucket.availableTokens).toBe(1);
    take(bucket);
    expect(state(bucket.acquire(ctx())).value).toBe('rejected:3500'); // the refill at 6,000 on the clock
    offset = 0;
    fake.advance(1_000);
    expect(bucket.availableTokens).toBe(1);
  });

  it('fixed window: windows follow each other from the first call; the wait counts the windows the queue fills', async () => {
    const time = new FakeTimeProvider(10);
    const window = new FixedWindowRateLimiter({ permitLimit: 2, window: 1_000, queueLimit: 4 }, time);
    expect(window.isIdle()).toBe(true);
    take(window);
    take(window);
    expect(window.isIdle()).toBe(false);
    time.advance(2_500); // now 2,510: the window started at 2,010
    take(window);
    take(window);
    const queued = [1, 2, 3, 4].map(() => state(window.acquire(ctx())));
    expect(time.pendingDelays).toEqual([500]);
    expect(state(window.acquire(ctx())).value).toBe('rejected:2500'); // 2 windows for the queue, then its own
    await time.advanceAsync(500);
    expect(queued.map((q) => q.value)).toEqual(['granted', 'granted', 'queued', 'queued']);
    await time.advanceAsync(1_000);
    expect(queued.map((q) => q.value)).toEqual(['granted', 'granted', 'granted', 'granted']);
    expect(window.isIdle()).toBe(false);
    time.advance(1_000);
    expect(window.isIdle()).toBe(true);
  });

  it('fixed window: a rejection waits for the next window when nobody queues', () => {
    const time = new FakeTimeProvider();
    const window = new FixedWindowRateLimiter({ permitLimit: 1, window: 1_000 }, time);
    take(window);
    time.advance(999);
    expect(state(window.acquire(ctx())).value).toBe('rejected:1');
    time.advance(1);
    expect(state(window.acquire(ctx())).value).toBe('granted');
  });

  it('sliding window: the wait walks the segments from the oldest, past the callers queued', async () => {
    const time = new FakeTimeProvider();
    const sliding = new SlidingWindowRateLimiter(
      { permitLimit: 3, window: 1_000, segmentsPerWindow: 4, queueLimit: 1 },
      time,
    );
    expect(sliding.isIdle()).toBe(true);
    take(sliding); // segment 0
    time.advance(250);
    take(sliding); // segment 1
    time.advance(250);
    take(sliding); // segment 2
    expect(sliding.isIdle()).toBe(false);
    const queued = state(sliding.acquire(ctx()));
    // The queued caller takes the permit of segment 0 (back at 1,000); the next one, segment 1's (1,250).
    expect(state(sliding.acquire(ctx())).value).toBe('rejected:750');
    expect(time.pendingDelays).toEqual([250]);
    await time.advanceAsync(250); // the end of the current segment: nothing left the window yet
    expect(queued.value).toBe('queued');
    await time.advanceAsync(250);
    expect(queued.value).toBe('granted');
    time.advance(1_000);
    expect(sliding.isIdle()).toBe(true);
  });

  it('sliding window: the default 10 segments, and a whole window when the queue is longer than the limit', () => {
    const time = new FakeTimeProvider();
    const sliding = new SlidingWindowRateLimiter({ permitLimit: 1, window: 1_000, queueLimit: 1 }, time);
    take(sliding);
    expect(time.pendingTimerCount).toBe(0);
    state(sliding.acquire(ctx()));
    expect(time.pendingDelays).toEqual([100]);
    expect(state(sliding.acquire(ctx())).value).toBe('rejected:1000');
  });

  it('never tells a negative wait', () => {
    const time = new FakeTimeProvider();
    const sliding = new SlidingWindowRateLimiter({ permitLimit: 1, window: 1_000, segmentsPerWindow: 2 }, time);
    take(sliding);
    time.advance(999);
    expect(state(sliding.acquire(ctx())).value).toBe('rejected:1');
  });

  it('cancels the queue and its timer on dispose, and queues nobody afterwards', async () => {
    const time = new FakeTimeProvider();
    const bucket = new TokenBucketRateLimiter({ tokenLimit: 1, replenishmentPeriod: 100, queueLimit: 2 }, time);
    take(bucket);
    const queued = state(bucket.acquire(ctx()));
    expect(time.pendingTimerCount).toBe(1);
    bucket.dispose();
    await flush();
    expect(queued.value).toBe('cancelled:The rate limiter was disposed.');
    expect(time.pendingTimerCount).toBe(0);
    expect(state(bucket.acquire(ctx())).value).toBe('rejected:100');
    bucket.dispose(); // twice is fine
  });

  it('clears no timer it never started', () => {
    const time = new FakeTimeProvider();
    const clear = jest.spyOn(time, 'clearTimeout');
    const window = new FixedWindowRateLimiter({ permitLimit: 1, window: 100, queueLimit: 1 }, time);
    take(window);
    window.dispose();
    expect(clear).not.toHaveBeenCalled();
  });

  it('a queued caller that leaves frees its place at once', async () => {
    const time = new FakeTimeProvider();
    const window = new FixedWindowRateLimiter({ permitLimit: 1, window: 100, queueLimit: 1 }, time);
    take(window);
    const controller = new AbortController();
    const leaving = state(window.acquire(new ResilienceContext({ signal: controller.signal })));
    controller.abort(new Error('gone'));
    await flush();
    expect(leaving.value).toBe('cancelled:gone');
    const next = state(window.acquire(ctx()));
    expect(next.value).toBe('queued');
    await time.advanceAsync(100);
    expect(next.value).toBe('granted');
  });
});

describe('PartitionedRateLimiter', () => {
  it('makes one limiter per key and drops idle ones every sweepEvery acquisitions, never the one asked', () => {
    const time = new FakeTimeProvider();
    const made: string[] = [];
    const limiter = new PartitionedRateLimiter(
      (c) => String(c.operationKey),
      (key) => (made.push(key), new FixedWindowRateLimiter({ permitLimit: 5, window: 1_000 }, time)),
      4,
    );
    const as = (key: string) => take(limiter, new ResilienceContext({ operationKey: key }));
    as('a');
    as('b');
    as('c');
    expect(limiter.partitionCount).toBe(3);
    expect(limiter.isIdle()).toBe(false);
    time.advance(1_000); // every window rolls over: all idle
    expect(limiter.isIdle()).toBe(true);
    as('d'); // the 4th acquisition sweeps; "d" is kept although idle before its permit is taken
    expect(limiter.partitionCount).toBe(1);
    expect(limiter.isIdle()).toBe(false); // "d" holds a permit
    as('a');
    expect(made).toEqual(['a', 'b', 'c', 'd', 'a']);
    expect(limiter.partitionCount).toBe(2);
  });

  it('is idle only when every partition is', () => {
    const time = new FakeTimeProvider();
    const limiter = new PartitionedRateLimiter(
      (c) => String(c.operationKey),
      (key) => new FixedWindowRateLimiter({ permitLimit: 5, window: key === 'slow' ? 10_000 : 1_000 }, time),
    );
    take(limiter, new ResilienceContext({ operationKey: 'fast' }));
    take(limiter, new ResilienceContext({ operationKey: 'slow' }));
    time.advance(1_000);
    expect(limiter.isIdle()).toBe(false); // "fast" is idle again, "slow" not
    time.advance(9_000);
    expect(limiter.isIdle()).toBe(true);
  });

  it('keeps a partition whose callers wait through a sweep made as its permits come back', async () => {
    const time = new FakeTimeProvider();
    const limiter = new PartitionedRateLimiter(
      (c) => String(c.operationKey),
      () => new TokenBucketRateLimiter({ tokenLimit: 1, replenishmentPeriod: 100, queueLimit: 1 }, time),
      4,
    );
    const as = (key: string) => new ResilienceContext({ operationKey: key });
    // Due with the refill but started before the bucket's timer: the token is back, its caller not served yet.
    time.setTimeout(() => {
      take(limiter, as('b'));
      take(limiter, as('c')); // the 4th acquisition: a sweep
    }, 100);
    take(limiter, as('a'));
    const waiting = state(limiter.acquire(as('a')));
    await time.advanceAsync(100);
    expect(waiting.value).toBe('granted');
  });

  it('keeps a busy partition through a sweep', () => {
    const time = new FakeTimeProvider();
    const limiter = new PartitionedRateLimiter(
      (c) => String(c.operationKey),
      () => new FixedWindowRateLimiter({ permitLimit: 5, window: 1_000 }, time),
      2,
    );
    take(limiter, new ResilienceContext({ operationKey: 'busy' }));
    take(limiter, new ResilienceContext({ operationKey: 'other' }));
    expect(limiter.partitionCount).toBe(2);
  });

  it('sweeps every 1,024 acquisitions by default', () => {
    const time = new FakeTimeProvider();
    const limiter = new PartitionedRateLimiter(
      (c) => String(c.operationKey),
      () => new TokenBucketRateLimiter({ tokenLimit: 5, replenishmentPeriod: 1 }, time),
    );
    for (let i = 0; i < 1_023; i++) {
      take(limiter, new ResilienceContext({ operationKey: `k${i}` }));
      time.advance(1);
    }
    expect(limiter.partitionCount).toBe(1_023);
    take(limiter, new ResilienceContext({ operationKey: 'last' }));
    expect(limiter.partitionCount).toBe(1); // every bucket refilled: only the one asked is kept
  });

  it('disposes every partition', async () => {
    const limiters: ConcurrencyLimiter[] = [];
    const limiter = new PartitionedRateLimiter(
      (c) => String(c.operationKey),
      () => {
        const l = new ConcurrencyLimiter({ permitLimit: 1, queueLimit: 1 });
        limiters.push(l);
        return l;
      },
    );
    take(limiter, new ResilienceContext({ operationKey: 'a' }));
    const queued = state(limiter.acquire(new ResilienceContext({ operationKey: 'a' })));
    take(limiter, new ResilienceContext({ operationKey: 'b' }));
    const spies = limiters.map((l) => jest.spyOn(l, 'dispose'));
    limiter.dispose();
    await flush();
    expect(spies.map((s) => s.mock.calls.length)).toEqual([1, 1]);
    expect(queued.value).toBe('cancelled:The concurrency limiter was disposed.');
    expect(limiter.partitionCount).toBe(0);
  });
});

describe('ChainedRateLimiter', () => {
  it('gives back the permits taken when a later limit rejects, with that limit\u2019s wait', () => {
    const time = new FakeTimeProvider();
    const concurrency = new ConcurrencyLimiter({ permitLimit: 1 });
    const window = new FixedWindowRateLimiter({ permitLimit: 1, window: 1_000 }, time);
    const chain = new ChainedRateLimiter([concurrency, window]);
    const lease = chain.acquire(ctx()) as RateLimitLease;
    expect(lease.acquired).toBe(true);
    expect(chain.isIdle()).toBe(false);
    lease.release();
    expect(concurrency.availablePermits).toBe(1);
    expect(chain.isIdle()).toBe(false); // the window still counts the call
    time.advance(100);
    expect(state(chain.acquire(ctx())).value).toBe('rejected:900');
    expect(concurrency.availablePermits).toBe(1);
    time.advance(900);
    expect(chain.isIdle()).toBe(true);
  });

  it('waits in a queue of the chain, then asks the limits after it', async () => {
    const time = new FakeTimeProvider();
    const first = new FixedWindowRateLimiter({ permitLimit: 1, window: 100, queueLimit: 1 }, time);
    const second = new ConcurrencyLimiter({ permitLimit: 1 });
    const third = new ConcurrencyLimiter({ permitLimit: 5 });
    const chain = new ChainedRateLimiter([first, second, third]);
    const held = chain.acquire(ctx()) as RateLimitLease;
    const waiting = chain.acquire(ctx());
    const seen = state(waiting);
    await time.advanceAsync(100);
    expect(seen.value).toBe('rejected:undefined'); // the second limit is still held
    expect(third.availablePermits).toBe(4); // only the held call's permit is out
    held.release();
    const again = chain.acquire(ctx());
    expect(state(again).value).toBe('queued');
    await time.advanceAsync(100);
    const lease = await again;
    expect(lease.acquired).toBe(true);
    expect([second.availablePermits, third.availablePermits]).toEqual([0, 4]);
    lease.release();
    expect([second.availablePermits, third.availablePermits]).toEqual([1, 5]);
  });

  it('gives back the permits taken when a queued wait is cancelled', async () => {
    const first = new ConcurrencyLimiter({ permitLimit: 2 });
    const second = new ConcurrencyLimiter({ permitLimit: 1, queueLimit: 1 });
    const chain = new ChainedRateLimiter([first, second]);
    take(chain);
    const controller = new AbortController();
    const waiting = chain.acquire(new ResilienceContext({ signal: controller.signal }));
    expect(first.availablePermits).toBe(0);
    controller.abort(new Error('gone'));
    await expect(waiting).rejects.toThrow('gone');
    expect(first.availablePermits).toBe(1);
  });

  it('gives back the permits taken when a limit answers later with a rejection', async () => {
    const first = new ConcurrencyLimiter({ permitLimit: 1 });
    const remote: RateLimiter = {
      acquire: () => Promise.resolve({ acquired: false, retryAfter: 250, release: () => undefined }),
      isIdle: () => true,
      dispose: () => undefined,
    };
    const chain = new ChainedRateLimiter([first, remote]);
    const lease = await chain.acquire(ctx());
    expect(lease).toMatchObject({ acquired: false, retryAfter: 250 });
    expect(first.availablePermits).toBe(1);
  });

  it('disposes every limit', () => {
    const limits: RateLimiter[] = [
      new ConcurrencyLimiter({ permitLimit: 1 }),
      new ConcurrencyLimiter({ permitLimit: 1 }),
    ];
    const spies = limits.map((l) => jest.spyOn(l, 'dispose'));
    new ChainedRateLimiter(limits).dispose();
    expect(spies.map((s) => s.mock.calls.length)).toEqual([1, 1]);
  });
});

describe('the rate limiter strategy', () => {
  it('rejects with the limiter\u2019s wait in the message, its source, telemetry and onRejected first', async () => {
    const time = new FakeTimeProvider();
    const events: { name: string; severity: string; args: unknown; source: unknown }[] = [];
    const onRejected = jest.fn(async (_: { retryAfter: number | undefined }) => {
      await time.delay(50);
    });
    const pipeline = new ResiliencePipelineBuilder({
      name: 'orders',
      timeProvider: time,
      telemetryListeners: [
        {
          write: (e) =>
            void events.push({ name: e.eventName, severity: e.severity, args: e.arguments, source: e.source }),
        },
      ],
    })
      .addRateLimiter({ name: 'per-second', kind: 'fixed-window', permitLimit: 1, window: 1_000, onRejected })
      .build();
    await pipeline.execute(() => 'ok');
    let settled = false;
    const rejected = pipeline.execute(() => 'no').finally(() => (settled = true));
    rejected.catch(() => undefined);
    await time.advanceAsync(49);
    expect(settled).toBe(false);
    await time.advanceAsync(1);
    const error = (await rejected.catch((e: unknown) => e)) as RateLimiterRejectedError;
    expect(error).toBeInstanceOf(RateLimiterRejectedError);
    expect(error.message).toBe('The operation was rejected by the rate limiter; retry after 1000 ms.');
    expect(error.retryAfter).toBe(1_000);
    expect(error.source).toEqual({ pipelineName: 'orders', strategyName: 'per-second' });
    expect(onRejected).toHaveBeenCalledWith(expect.objectContaining({ retryAfter: 1_000 }));
    expect(events.filter((e) => e.name === 'OnRateLimiterRejected')).toEqual([
      {
        name: 'OnRateLimiterRejected',
        severity: 'error',
        args: { retryAfter: 1_000, reason: 'limit' },
        source: expect.objectContaining({
          pipelineName: 'orders',
          strategyName: 'per-second',
          strategyType: 'rate-limiter',
        }),
      },
    ]);
  });

  it('rejects a concurrency limit without a wait', async () => {
    const pipeline = new ResiliencePipelineBuilder().addConcurrencyLimiter(1).build();
    const gate = deferred<string>();
    const first = pipeline.execute(() => gate.promise);
    const error = (await pipeline.execute(() => 'no').catch((e: unknown) => e)) as RateLimiterRejectedError;
    expect(error.message).toBe('The operation was rejected by the rate limiter.');
    expect(error.retryAfter).toBeUndefined();
    gate.resolve('ok');
    await first;
  });

  it('gives a permit back however the call ends, for a concurrency limit and for a chain holding one', async () => {
    for (const options of [
      { kind: 'concurrency' as const, permitLimit: 1 },
      {
        limits: [
          { kind: 'concurrency' as const, permitLimit: 1 },
          { kind: 'token-bucket' as const, tokenLimit: 100, replenishmentPeriod: 1_000 },
        ],
      },
    ]) {
      const pipeline = new ResiliencePipelineBuilder().addRateLimiter(options).build();
      await expect(pipeline.execute(() => 'ok')).resolves.toBe('ok');
      await expect(pipeline.execute(() => Promise.reject(new Error('failed')))).rejects.toThrow('failed');
      await expect(
        pipeline.execute(() => {
          throw new Error('thrown');
        }),
      ).rejects.toThrow('thrown');
      await expect(pipeline.execute(() => 'still admitted')).resolves.toBe('still admitted');
    }
  });

  it('gives a permit back when the strategy inside throws synchronously', async () => {
    for (const options of [
      { kind: 'concurrency' as const, permitLimit: 1 },
      {
        limits: [
          { kind: 'concurrency' as const, permitLimit: 1 },
          { kind: 'concurrency' as const, permitLimit: 1 },
        ],
      },
    ]) {
      const pipeline = new ResiliencePipelineBuilder()
        .addRateLimiter(options)
        .addStrategy({
          type: 'sync-thrower',
          options: {},
          create: () => ({
            execute: () => {
              throw new Error('sync');
            },
          }),
        })
        .build();
      await expect(pipeline.execute(() => 'x')).rejects.toThrow('sync');
      await expect(pipeline.execute(() => 'x')).rejects.toThrow('sync'); // not RateLimiterRejectedError
    }
  });

  it('a queued call runs when a permit comes back, with its own result or failure', async () => {
    const pipeline = new ResiliencePipelineBuilder().addConcurrencyLimiter(1, 2).build();
    const gate = deferred<string>();
    const first = pipeline.execute(() => gate.promise);
    const second = pipeline.execute(() => Promise.reject(new Error('second failed')));
    const third = pipeline.execute(() => 'third');
    gate.resolve('first');
    await expect(first).resolves.toBe('first');
    await expect(second).rejects.toThrow('second failed');
    await expect(third).resolves.toBe('third');
  });

  it('disposes the limiter it made with the pipeline, never a limiter given to it', async () => {
    const own = new ConcurrencyLimiter({ permitLimit: 1, queueLimit: 1 });
    const spy = jest.spyOn(own, 'dispose');
    const given = new ResiliencePipelineBuilder().addRateLimiter({ limiter: own }).build();
    await given.dispose();
    expect(spy).not.toHaveBeenCalled();

    const made = new ResiliencePipelineBuilder().addConcurrencyLimiter(1, 1).build();
    const gate = deferred<string>();
    const running = made.execute(() => gate.promise);
    const queued = made.execute(() => 'queued');
    await made.dispose();
    await expect(queued).rejects.toThrow('The concurrency limiter was disposed.');
    gate.resolve('done');
    await running;
  });
});
