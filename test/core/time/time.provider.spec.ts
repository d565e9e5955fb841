import { describe, expect, it } from '@jest/globals';
import { getEventListeners } from 'node:events';
import { abortReason, SystemTimeProvider, systemTimeProvider, TimeProvider } from '../../../src/core.entry.js';
import { FakeTimeProvider } from '../../../src/testing/index.js';

describe('TimeProvider.delay', () => {
  it('waits the delay, then releases its abort listener', async () => {
    const time = new FakeTimeProvider();
    const signal = new AbortController().signal;
    let done = false;
    const waiting = time.delay(100, signal).then(() => (done = true));
    expect(getEventListeners(signal, 'abort')).toHaveLength(1);
    await time.advanceAsync(99);
    expect(done).toBe(false);
    await time.advanceAsync(1);
    await waiting;
    expect(done).toBe(true);
    expect(getEventListeners(signal, 'abort')).toHaveLength(0);
  });

  it('rejects with the reason as soon as the signal aborts, and clears its timer', async () => {
    const time = new FakeTimeProvider();
    const controller = new AbortController();
    const waiting = time.delay(1_000, controller.signal);
    expect(time.pendingTimerCount).toBe(1);
    const reason = new Error('stop');
    controller.abort(reason);
    await expect(waiting).rejects.toBe(reason);
    expect(time.pendingTimerCount).toBe(0);
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
  });

  it('rejects at once, without a timer, for a signal that already aborted', async () => {
    const time = new FakeTimeProvider();
    const reason = new Error('before');
    await expect(time.delay(10, AbortSignal.abort(reason))).rejects.toBe(reason);
    await expect(time.delay(0, AbortSignal.abort(reason))).rejects.toBe(reason);
    expect(time.pendingTimerCount).toBe(0);
  });

  it.each([0, -5])('resolves a delay of %d at once, without a timer', async (delay) => {
    const time = new FakeTimeProvider();
    await expect(time.delay(delay)).resolves.toBeUndefined();
    expect(time.pendingTimerCount).toBe(0);
  });

  it('a delay of 1 ms still waits for the clock', async () => {
    const time = new FakeTimeProvider();
    let done = false;
    const waiting = time.delay(1).then(() => (done = true));
    await Promise.resolve();
    expect(done).toBe(false);
    expect(time.pendingDelays).toEqual([1]);
    await time.advanceAsync(1);
    await waiting;
    expect(done).toBe(true);
  });

  it('works for a clock of your own that implements only now, setTimeout and clearTimeout', async () => {
    const cleared: unknown[] = [];
    class Manual extends TimeProvider {
      pending: (() => void) | undefined;
      now = () => 0;
      setTimeout(callback: () => void): unknown {
        this.pending = callback;
        return 'handle';
      }
      clearTimeout(handle: unknown): void {
        cleared.push(handle);
      }
    }
    const clock = new Manual();
    const controller = new AbortController();
    const waiting = clock.delay(5, controller.signal);
    controller.abort();
    await expect(waiting).rejects.toMatchObject({ name: 'AbortError' });
    expect(cleared).toEqual(['handle']);
  });
});

describe('abortReason', () => {
  it("is the signal's reason, or a standard AbortError when it carries none", () => {
    const reason = new Error('why');
    expect(abortReason(AbortSignal.abort(reason))).toBe(reason);
    const signal = { reason: undefined } as AbortSignal;
    const fallback = abortReason(signal) as DOMException;
    expect(fallback).toBeInstanceOf(DOMException);
    expect(fallback.name).toBe('AbortError');
    expect(fallback.message).toBe('This operation was aborted');
  });
});

describe('SystemTimeProvider', () => {
  it('reads Date.now and runs Node timers, which it can clear', async () => {
    const clock = new SystemTimeProvider();
    expect(systemTimeProvider).toBeInstanceOf(SystemTimeProvider);
    const before = Date.now();
    expect(clock.now()).toBeGreaterThanOrEqual(before);
    expect(clock.now()).toBeLessThanOrEqual(Date.now());
    let cleared = true;
    clock.clearTimeout(clock.setTimeout(() => (cleared = false), 0));
    await new Promise<void>((resolve) => clock.setTimeout(resolve, 5));
    expect(cleared).toBe(true);
  });
});
