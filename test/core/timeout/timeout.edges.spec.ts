import { describe, expect, it } from '@jest/globals';
import {
  ResilienceContext,
  ResiliencePipelineBuilder,
  ResiliencePropertyKey,
  TimeoutRejectedError,
} from '../../../src/core.entry.js';
import { FakeTimeProvider } from '../../../src/testing/index.js';
import { RecordingListener } from '../../utils/recording.listener.js';

const down = new Error('down');

describe('timeout: behaviours at the edges', () => {
  describe('aggressive mode, callback settling before the deadline', () => {
    function aggressive(onTimeout?: () => void) {
      const time = new FakeTimeProvider();
      const listener = new RecordingListener();
      const pipeline = new ResiliencePipelineBuilder({ timeProvider: time, telemetryListeners: [listener] })
        .addTimeout({ timeout: 1_000, mode: 'aggressive', onTimeout })
        .build();
      return { time, listener, pipeline };
    }

    it('passes the failure through as is, clears its timer and reports no timeout', async () => {
      let timeouts = 0;
      const { time, listener, pipeline } = aggressive(() => void timeouts++);
      const result = pipeline.execute(async () => {
        await time.delay(400);
        throw down;
      });
      const settled = expect(result).rejects.toBe(down);
      await time.advanceAsync(400);
      await settled;
      expect(time.pendingTimerCount).toBe(0);
      await time.advanceAsync(1_000);
      expect(timeouts).toBe(0);
      expect(listener.names()).not.toContain('OnTimeout');
    });

    it('a success just before the deadline wins; the timer never fires', async () => {
      let timeouts = 0;
      const { time, pipeline } = aggressive(() => void timeouts++);
      const result = pipeline.execute(async () => {
        await time.delay(999);
        return 'in time';
      });
      await time.advanceAsync(999);
      await expect(result).resolves.toBe('in time');
      await time.advanceAsync(5_000);
      expect(timeouts).toBe(0);
    });

    it('a failure after the deadline is discarded: the caller gets the timeout', async () => {
      const { time, pipeline } = aggressive();
      const result = pipeline.execute(async () => {
        await time.delay(2_000);
        throw down;
      });
      const settled = expect(result).rejects.toBeInstanceOf(TimeoutRejectedError);
      await time.advanceAsync(1_000);
      await settled;
      await time.advanceAsync(1_000); // the late failure is swallowed, no unhandled rejection
    });

    it('copies properties set by the inner call back to the caller context', async () => {
      const { pipeline } = aggressive();
      const key = new ResiliencePropertyKey<string>('seen');
      const context = new ResilienceContext();
      await pipeline.execute((inner) => {
        inner.properties.set(key, 'inner');
        return Promise.resolve(1);
      }, context);
      expect(context.properties.get(key)).toBe('inner');
    });
  });

  describe('what the callback throws once the timeout aborted it', () => {
    function cooperative(thrown: (reason: unknown) => unknown) {
      const time = new FakeTimeProvider();
      const pipeline = new ResiliencePipelineBuilder({ timeProvider: time }).addTimeout(100).build();
      const result = pipeline.execute(
        ({ signal }) =>
          new Promise((_, reject) => signal.addEventListener('abort', () => reject(thrown(signal.reason)))),
      );
      return { time, result };
    }

    it('the abort reason itself becomes TimeoutRejectedError, with the reason as cause and a readable message', async () => {
      const { time, result } = cooperative((reason) => reason);
      const settled = result.then(
        () => undefined,
        (e: unknown) => e,
      );
      await time.advanceAsync(100);
      const error = (await settled) as TimeoutRejectedError;
      expect(error).toBeInstanceOf(TimeoutRejectedError);
      expect((error.cause as DOMException).name).toBe('TimeoutError');
      expect((error.cause as DOMException).message).toBe('The operation timed out after 100 ms.');
    });

    it.each([
      ['an AbortError of its own', () => Object.assign(new Error('aborted'), { name: 'AbortError' })],
      ['an error named TimeoutError', () => Object.assign(new Error('socket timeout'), { name: 'TimeoutError' })],
    ])('%s becomes TimeoutRejectedError', async (_, make) => {
      const { time, result } = cooperative(make);
      const settled = expect(result).rejects.toBeInstanceOf(TimeoutRejectedError);
      await time.advanceAsync(100);
      await settled;
    });

    it.each([
      ['an unrelated error', new Error('cleanup failed')],
      ['a string', 'gone'],
      ['null', null],
      ['undefined', undefined],
      ['an object without a name', { code: 'E_CLEANUP' }],
    ])('%s is passed through as is', async (_, value) => {
      const { time, result } = cooperative(() => value);
      const settled = expect(result).rejects.toBe(value);
      await time.advanceAsync(100);
      await settled;
    });
  });

  it('a timeoutGenerator that throws rejects the call (it does not throw synchronously)', async () => {
    const pipeline = new ResiliencePipelineBuilder()
      .addTimeout({
        timeoutGenerator: () => {
          throw down;
        },
      })
      .build();
    let called = false;
    const result = pipeline.execute(() => {
      called = true;
      return Promise.resolve(1);
    });
    await expect(result).rejects.toBe(down);
    expect(called).toBe(false);
  });

  it('aggressive: what a callback sets on its context after the deadline does not reach the caller', async () => {
    const time = new FakeTimeProvider();
    const key = new ResiliencePropertyKey<string>('late');
    const context = new ResilienceContext();
    const pipeline = new ResiliencePipelineBuilder({ timeProvider: time })
      .addTimeout({ timeout: 100, mode: 'aggressive' })
      .build();
    const result = pipeline.execute(async (inner) => {
      await time.delay(500);
      inner.properties.set(key, 'too late');
      return 1;
    }, context);
    const settled = expect(result).rejects.toBeInstanceOf(TimeoutRejectedError);
    await time.advanceAsync(100);
    await settled;
    await time.advanceAsync(400);
    expect(context.properties.get(key)).toBeUndefined();
  });

  it('cooperative: a failure before the deadline is not turned into a timeout', async () => {
    const time = new FakeTimeProvider();
    const pipeline = new ResiliencePipelineBuilder({ timeProvider: time }).addTimeout(1_000).build();
    const result = pipeline.execute(async ({ signal }) => {
      await time.delay(10, signal);
      throw Object.assign(new Error('aborted elsewhere'), { name: 'AbortError' });
    });
    const settled = expect(result).rejects.toThrow('aborted elsewhere');
    await time.advanceAsync(10);
    await settled;
    expect(time.pendingTimerCount).toBe(0);
  });

  it.each([
    [{ timeout: 0 }, 'timeout', 'must be a number > 0 and <= 2147483647'],
    [{ timeout: -1 }, 'timeout', 'must be a number > 0 and <= 2147483647'],
    [{ mode: 'brutal' }, 'mode', 'must be one of "cooperative", "aggressive"'],
    [{ timeoutGenerator: 1 }, 'timeoutGenerator', 'must be a function'],
    [{ onTimeout: 'x' }, 'onTimeout', 'must be a function'],
    [{ name: '' }, 'name', 'must be a non-empty string'],
  ])('rejects %j at %s', (options, path, rule) => {
    expect(() => new ResiliencePipelineBuilder().addTimeout(options as never).build()).toThrow(
      expect.objectContaining({ issues: [expect.objectContaining({ path: `strategies[0] (timeout).${path}`, rule })] }),
    );
  });
});
