import { describe, expect, it } from '@jest/globals';
import {
  DEFAULT_TIMEOUT,
  MAX_TIMER_DELAY,
  ResilienceContext,
  ResiliencePipelineBuilder,
  ResiliencePropertyKey,
  TimeoutRejectedError,
  type TimeoutMode,
  type TimeoutStrategyOptions,
} from '../../../src/core.entry.js';
import { FakeTimeProvider } from '../../../src/testing/index.js';
import { scripted } from '../../utils/flaky.js';

const down = new Error('down');

const variants: [string, (timeout: number) => TimeoutStrategyOptions][] = [
  ['cooperative', (timeout) => ({ timeout })],
  ['aggressive', (timeout) => ({ timeout, mode: 'aggressive' })],
  ['generated cooperative', (timeout) => ({ timeoutGenerator: () => timeout })],
  ['generated aggressive', (timeout) => ({ timeoutGenerator: () => Promise.resolve(timeout), mode: 'aggressive' })],
];

describe.each(variants)('the deadline a %s timeout hands to the strategies inside it', (_, timeout) => {
  it('an inner retry whose wait fits before the deadline is made', async () => {
    const time = new FakeTimeProvider();
    const fn = scripted<string>({ throws: down }, { returns: 'second' });
    const pipeline = new ResiliencePipelineBuilder({ timeProvider: time })
      .addTimeout(timeout(1_000))
      .addRetry({ delay: 999 })
      .build();
    const result = pipeline.execute(fn);
    await time.advanceAsync(999);
    await expect(result).resolves.toBe('second');
    expect(fn.calls).toBe(2);
    expect(time.pendingTimerCount).toBe(0);
  });

  it('an inner retry whose wait would outlive the deadline gives the real failure at once', async () => {
    const time = new FakeTimeProvider();
    const fn = scripted<string>({ throws: down }, { returns: 'never' });
    const pipeline = new ResiliencePipelineBuilder({ timeProvider: time })
      .addTimeout(timeout(1_000))
      .addRetry({ delay: 1_001 })
      .build();
    const result = pipeline.execute(fn);
    const settled = expect(result).rejects.toBe(down);
    await time.advanceAsync(0);
    await settled;
    expect(fn.calls).toBe(1);
    expect(time.pendingTimerCount).toBe(0);
  });

  it('a longer timeout inside it does not loosen its deadline', async () => {
    const time = new FakeTimeProvider();
    const fn = scripted<string>({ throws: down }, { returns: 'never' });
    const pipeline = new ResiliencePipelineBuilder({ timeProvider: time })
      .addTimeout(timeout(500))
      .addTimeout(timeout(10_000))
      .addRetry({ delay: 600 })
      .build();
    const result = pipeline.execute(fn);
    const settled = expect(result).rejects.toBe(down);
    await time.advanceAsync(0);
    await settled;
    expect(fn.calls).toBe(1);
  });

  it('a shorter timeout inside it tightens the deadline', async () => {
    const time = new FakeTimeProvider();
    const fn = scripted<string>({ throws: down }, { returns: 'never' });
    const pipeline = new ResiliencePipelineBuilder({ timeProvider: time })
      .addTimeout(timeout(10_000))
      .addTimeout(timeout(500))
      .addRetry({ delay: 600 })
      .build();
    const result = pipeline.execute(fn);
    const settled = expect(result).rejects.toBe(down);
    await time.advanceAsync(0);
    await settled;
    expect(fn.calls).toBe(1);
  });

  it('once an attempt under it ended, the retry around it is no longer bound by its deadline', async () => {
    const time = new FakeTimeProvider();
    const fn = scripted<string>({ throws: down }, { returns: 'second' });
    const pipeline = new ResiliencePipelineBuilder({ timeProvider: time })
      .addRetry({ delay: 500 })
      .addTimeout(timeout(100))
      .build();
    const result = pipeline.execute(fn);
    await time.advanceAsync(500);
    await expect(result).resolves.toBe('second');
    expect(fn.calls).toBe(2);
    expect(time.pendingTimerCount).toBe(0);
  });

  it("once it ended, the caller's context carries no deadline into the next call", async () => {
    const time = new FakeTimeProvider();
    const context = new ResilienceContext();
    const timed = new ResiliencePipelineBuilder({ timeProvider: time }).addTimeout(timeout(100)).build();
    const retrying = new ResiliencePipelineBuilder({ timeProvider: time }).addRetry({ delay: 500 }).build();
    await timed.execute(() => 'first', context);
    const fn = scripted<string>({ throws: down }, { returns: 'second' });
    const result = retrying.execute(fn, context);
    await time.advanceAsync(500);
    await expect(result).resolves.toBe('second');
  });
});

describe('timeout durations', () => {
  it.each<[string, TimeoutStrategyOptions, number]>([
    ['the default timeout when none is given', {}, DEFAULT_TIMEOUT],
    [
      'a generated timeout past the largest timer delay, capped',
      { timeoutGenerator: () => MAX_TIMER_DELAY * 2 },
      MAX_TIMER_DELAY,
    ],
    ['a generated timeout of 1 ms', { timeoutGenerator: () => 1 }, 1],
  ])('arms %s', async (_, options, armed) => {
    const time = new FakeTimeProvider();
    const pipeline = new ResiliencePipelineBuilder({ timeProvider: time }).addTimeout(options).build();
    let open: () => void = () => undefined;
    const result = pipeline.execute(() => new Promise<void>((resolve) => (open = resolve)));
    await time.advanceAsync(0);
    expect(time.pendingDelays).toEqual([armed]);
    open();
    await result;
    expect(time.pendingTimerCount).toBe(0);
  });

  it.each<[string, () => number | undefined]>([
    ['undefined', () => undefined],
    ['zero', () => 0],
    ['a negative number', () => -5],
    ['NaN', () => NaN],
  ])('a generated timeout of %s runs the call without a timeout', async (_, generate) => {
    const time = new FakeTimeProvider();
    const pipeline = new ResiliencePipelineBuilder({ timeProvider: time })
      .addTimeout({ timeoutGenerator: generate, mode: 'aggressive' })
      .addRetry({ delay: 10_000 })
      .build();
    const fn = scripted<string>({ throws: down }, { returns: 'after a long wait' });
    const result = pipeline.execute(fn);
    await time.advanceAsync(0);
    expect(time.pendingDelays).toEqual([10_000]);
    await time.advanceAsync(10_000);
    await expect(result).resolves.toBe('after a long wait');
  });

  it('the generator sees the call context', async () => {
    const seen: (string | undefined)[] = [];
    const pipeline = new ResiliencePipelineBuilder()
      .addTimeout({
        timeoutGenerator: ({ context }) => {
          seen.push(context.operationKey);
          return 1_000;
        },
      })
      .build();
    await pipeline.execute(() => 1, { operationKey: 'orders' });
    expect(seen).toEqual(['orders']);
  });
});

describe.each<[string, boolean]>([
  ['alone', false],
  ['inside retry → circuit breaker (an inline run)', true],
])('aggressive timeout %s, callback failing before the deadline', (_, composed) => {
  function pipelineOn(time: FakeTimeProvider, onTimeout: () => void) {
    const builder = new ResiliencePipelineBuilder({ timeProvider: time });
    if (composed) builder.addRetry({ maxRetryAttempts: 0 }).addCircuitBreaker();
    return builder.addTimeout({ timeout: 1_000, mode: 'aggressive' as TimeoutMode, onTimeout }).build();
  }

  it('passes the failure through, releases its deadline and never reports a timeout', async () => {
    const time = new FakeTimeProvider();
    let timeouts = 0;
    const pipeline = pipelineOn(time, () => void timeouts++);
    const result = pipeline.execute(async () => {
      await time.delay(400);
      throw down;
    });
    const settled = expect(result).rejects.toBe(down);
    await time.advanceAsync(400);
    await settled;
    expect(time.pendingTimerCount).toBe(0);
    await time.advanceAsync(2_000);
    expect(timeouts).toBe(0);
  });

  it('keeps the properties the failing callback set', async () => {
    const time = new FakeTimeProvider();
    const key = new ResiliencePropertyKey<string>('why');
    const context = new ResilienceContext();
    const pipeline = pipelineOn(time, () => undefined);
    const result = pipeline.execute(async (inner) => {
      inner.properties.set(key, 'db down');
      await time.delay(10);
      throw down;
    }, context);
    const settled = expect(result).rejects.toBe(down);
    await time.advanceAsync(10);
    await settled;
    expect(context.properties.get(key)).toBe('db down');
  });

  it('a failure at the deadline loses to the timeout', async () => {
    const time = new FakeTimeProvider();
    let timeouts = 0;
    const pipeline = pipelineOn(time, () => void timeouts++);
    const result = pipeline.execute(async ({ signal }) => {
      await time.delay(5_000, signal);
      return 'never';
    });
    const settled = expect(result).rejects.toBeInstanceOf(TimeoutRejectedError);
    await time.advanceAsync(1_000);
    await settled;
    expect(timeouts).toBe(1);
    expect(time.pendingTimerCount).toBe(0);
  });
});
