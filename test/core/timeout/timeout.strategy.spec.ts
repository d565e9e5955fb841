import { describe, expect, it, jest } from '@jest/globals';
import { getEventListeners } from 'node:events';
import {
  ResiliencePipelineBuilder,
  TimeoutRejectedError,
  ResilienceContext,
  ResiliencePropertyKey,
} from '../../../src/core.entry.js';
import { FakeTimeProvider } from '../../../src/testing/index.js';
import { isPending, nextTurn } from '../../utils/flaky.js';
import { RecordingListener } from '../../utils/recording.listener.js';

function setup() {
  const time = new FakeTimeProvider();
  return { time, builder: new ResiliencePipelineBuilder({ timeProvider: time }) };
}

/** A cooperative operation: finishes after `ms`, or rejects with the signal's reason when aborted. */
function work(time: FakeTimeProvider, ms: number, value = 'done') {
  return ({ signal }: { signal: AbortSignal }) => time.delay(ms, signal).then(() => value);
}

describe('timeout strategy', () => {
  describe('cooperative (default)', () => {
    it('returns the result of a call that finishes in time and releases its timer', async () => {
      const { time, builder } = setup();
      const result = builder.addTimeout(1_000).build().execute(work(time, 999));
      await time.advanceAsync(999);
      await expect(result).resolves.toBe('done');
      expect(time.pendingTimerCount).toBe(0);
    });

    it('aborts the signal at the deadline and rejects with TimeoutRejectedError carrying the cause', async () => {
      const { time } = setup();
      const onTimeout = jest.fn<(args: unknown) => void>();
      const listener = new RecordingListener();
      const result = new ResiliencePipelineBuilder({ timeProvider: time, telemetryListeners: [listener] })
        .addTimeout({ timeout: 1_000, onTimeout })
        .build()
        .execute(work(time, 5_000))
        .catch((e: unknown) => e);
      await time.advanceAsync(1_000);
      const error = (await result) as TimeoutRejectedError;
      expect(error).toBeInstanceOf(TimeoutRejectedError);
      expect(error.timeout).toBe(1_000);
      expect((error.cause as DOMException).name).toBe('TimeoutError');
      expect(onTimeout).toHaveBeenCalledWith(expect.objectContaining({ timeout: 1_000 }));
      expect(listener.events.find((e) => e.eventName === 'OnTimeout')).toMatchObject({
        severity: 'error',
        arguments: { timeout: 1_000 },
      });
      expect(time.pendingTimerCount).toBe(0);
    });

    it('returns the late result of a callback that ignores the signal (no TimeoutRejectedError)', async () => {
      const { time, builder } = setup();
      const result = builder
        .addTimeout(1_000)
        .build()
        .execute(() => time.delay(3_000).then(() => 'late but fine'));
      await time.advanceAsync(1_000);
      expect(await isPending(result)).toBe(true);
      await time.advanceAsync(2_000);
      await expect(result).resolves.toBe('late but fine');
    });

    it('passes through a failure that the timeout did not cause', async () => {
      const { time, builder } = setup();
      const failure = new Error('boom');
      const result = builder
        .addTimeout(1_000)
        .build()
        .execute(() => time.delay(10).then(() => Promise.reject(failure)));
      const settled = expect(result).rejects.toBe(failure);
      await time.advanceAsync(10);
      await settled;
    });

    it("reports the caller's own cancellation as such, not as a timeout", async () => {
      const { time, builder } = setup();
      const controller = new AbortController();
      const result = builder.addTimeout(1_000).build().execute(work(time, 5_000), { signal: controller.signal });
      await time.advanceAsync(100);
      controller.abort(new Error('client went away'));
      await expect(result).rejects.toThrow('client went away');
      expect(time.pendingTimerCount).toBe(0);
      expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
    });

    it('takes the timeout per call from timeoutGenerator; zero or less means no timeout', async () => {
      const { time, builder } = setup();
      const pipeline = builder
        .addTimeout({ timeoutGenerator: ({ context }) => (context.operationKey === 'fast' ? 100 : 0) })
        .build();
      const fast = pipeline.execute(work(time, 500), { operationKey: 'fast' });
      const unbounded = pipeline.execute(work(time, 500), { operationKey: 'slow' });
      const fastRejected = expect(fast).rejects.toBeInstanceOf(TimeoutRejectedError);
      await time.advanceAsync(500);
      await fastRejected;
      await expect(unbounded).resolves.toBe('done');
    });

    it('lets the innermost of two nested timeouts fire first, attributed to itself', async () => {
      const { time, builder } = setup();
      const result = builder.addTimeout(5_000).addTimeout(1_000).build().execute(work(time, 10_000));
      const rejected = expect(result).rejects.toMatchObject({ timeout: 1_000 });
      await time.advanceAsync(1_000);
      await rejected;
      expect(time.pendingTimerCount).toBe(0);
    });

    it('creates no signal when the callback never reads it', async () => {
      const { builder } = setup();
      const spy = jest.spyOn(globalThis, 'AbortController');
      await builder
        .addTimeout(1_000)
        .build()
        .execute(() => 1);
      expect(spy).not.toHaveBeenCalled();
      spy.mockRestore();
    });
  });

  describe('aggressive', () => {
    it('rejects at the deadline even when the callback ignores the signal, and swallows its late failure', async () => {
      const { time, builder } = setup();
      const unhandled = jest.fn<() => void>();
      process.on('unhandledRejection', unhandled);
      let signal: AbortSignal | undefined;
      const result = builder
        .addTimeout({ timeout: 1_000, mode: 'aggressive' })
        .build()
        .execute((ctx) => {
          signal = ctx.signal;
          return time.delay(5_000).then(() => Promise.reject(new Error('late failure')));
        });
      const rejected = expect(result).rejects.toBeInstanceOf(TimeoutRejectedError);
      await time.advanceAsync(1_000);
      await rejected;
      expect(signal?.aborted).toBe(true);
      await time.advanceAsync(4_000);
      await nextTurn();
      process.off('unhandledRejection', unhandled);
      expect(unhandled).not.toHaveBeenCalled();
      expect(time.pendingTimerCount).toBe(0);
    });

    it('returns an in-time result and merges the properties the callback set', async () => {
      const { time, builder } = setup();
      const Key = new ResiliencePropertyKey<string>('who');
      const context = new ResilienceContext();
      const result = builder
        .addTimeout({ timeout: 1_000, mode: 'aggressive' })
        .build()
        .execute((ctx) => {
          ctx.properties.set(Key, 'inner');
          return time.delay(10).then(() => 'ok');
        }, context);
      await time.advanceAsync(10);
      await expect(result).resolves.toBe('ok');
      expect(context.properties.get(Key)).toBe('inner');
      expect(time.pendingTimerCount).toBe(0);
    });
  });
});
