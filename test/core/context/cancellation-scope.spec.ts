import { describe, expect, it } from '@jest/globals';
import { getEventListeners, getMaxListeners } from 'node:events';
import { ResiliencePipelineBuilder, TimeoutRejectedError, type TimeoutMode } from '../../../src/core.entry.js';
import { NoCancellationScope } from '../../../src/core/context/cancellation.scope.js';
import { FakeTimeProvider } from '../../../src/testing/index.js';

/**
 * The number of listeners past which Node warns of a leak (0: unlimited). Node 20's `getMaxListeners`
 * throws for an EventTarget whose limit was set to 0, so a throw reads as unlimited.
 */
function listenerLimit(signal: AbortSignal): number {
  try {
    return getMaxListeners(signal);
  } catch {
    return 0;
  }
}

/** The signal a callback sees under a timeout: linked to the caller's, created only when read. */
describe.each<TimeoutMode>(['cooperative', 'aggressive'])('the signal under a %s timeout', (mode) => {
  function pipelineOn(time: FakeTimeProvider) {
    return new ResiliencePipelineBuilder({ timeProvider: time }).addTimeout({ timeout: 100, mode }).build();
  }

  it("aborts with the caller's reason when the caller aborts while the callback listens", async () => {
    const time = new FakeTimeProvider();
    const caller = new AbortController();
    let inner: AbortSignal | undefined;
    const result = pipelineOn(time).execute(
      ({ signal }) => {
        inner = signal;
        return new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason)));
      },
      { signal: caller.signal },
    );
    expect(inner).not.toBe(caller.signal);
    expect(getEventListeners(caller.signal, 'abort')).toHaveLength(1);
    const reason = new Error('caller left');
    caller.abort(reason);
    await expect(result).rejects.toBe(reason);
    expect(inner!.reason).toBe(reason);
  });

  it("is already aborted, with the caller's reason, when first read after the caller aborted", async () => {
    const time = new FakeTimeProvider();
    const caller = new AbortController();
    const reason = new Error('caller left');
    const result = pipelineOn(time).execute(
      async (ctx) => {
        await Promise.resolve();
        caller.abort(reason);
        const signal = ctx.signal;
        return { aborted: signal.aborted, reason: signal.reason as unknown };
      },
      { signal: caller.signal },
    );
    await expect(result).resolves.toEqual({ aborted: true, reason });
    expect(getEventListeners(caller.signal, 'abort')).toHaveLength(0);
  });

  it('read after the deadline, it is aborted with the timeout reason', async () => {
    const time = new FakeTimeProvider();
    let context: { signal: AbortSignal } | undefined;
    const result = pipelineOn(time).execute(async (ctx) => {
      context = ctx;
      await time.delay(500);
      return 'late';
    });
    const settled = result.catch((e: unknown) => e);
    await time.advanceAsync(100);
    const late = context!.signal;
    expect(late.aborted).toBe(true);
    expect((late.reason as DOMException).name).toBe('TimeoutError');
    expect((late.reason as DOMException).message).toBe('The operation timed out after 100 ms.');
    await time.advanceAsync(400);
    const outcome = await settled;
    if (mode === 'aggressive') expect(outcome).toBeInstanceOf(TimeoutRejectedError);
    else expect(outcome).toBe('late');
  });

  it('keeps the timeout as the reason when the caller aborts after the deadline', async () => {
    const time = new FakeTimeProvider();
    const caller = new AbortController();
    let inner: AbortSignal | undefined;
    const result = pipelineOn(time)
      .execute(
        ({ signal }) => {
          inner = signal;
          return time.delay(1_000).then(() => 'late');
        },
        { signal: caller.signal },
      )
      .catch((e: unknown) => e);
    await time.advanceAsync(100);
    expect((inner!.reason as DOMException).name).toBe('TimeoutError');
    // The abort released the link to the caller's signal.
    expect(getEventListeners(caller.signal, 'abort')).toHaveLength(0);
    caller.abort(new Error('too late'));
    expect((inner!.reason as DOMException).name).toBe('TimeoutError');
    await time.advanceAsync(900);
    await result;
  });

  it("releases its listener on the caller's signal when the call ends", async () => {
    const time = new FakeTimeProvider();
    const caller = new AbortController();
    await pipelineOn(time).execute(({ signal }) => signal.aborted, { signal: caller.signal });
    expect(getEventListeners(caller.signal, 'abort')).toHaveLength(0);
  });

  it('a signal read twice is the same signal, linked once', async () => {
    const time = new FakeTimeProvider();
    const caller = new AbortController();
    await pipelineOn(time).execute(
      (ctx) => {
        expect(ctx.signal).toBe(ctx.signal);
        expect(getEventListeners(caller.signal, 'abort')).toHaveLength(1);
      },
      { signal: caller.signal },
    );
  });

  it('takes any number of listeners, and so does the caller signal many calls link to (no leak warning)', async () => {
    const time = new FakeTimeProvider();
    const pipeline = pipelineOn(time);
    const caller = new AbortController();
    const gates: (() => void)[] = [];
    const limits: number[] = [];
    expect(listenerLimit(caller.signal)).toBe(10);
    const calls = Array.from({ length: 15 }, () =>
      pipeline.execute(
        ({ signal }) => {
          limits.push(listenerLimit(signal));
          return new Promise<void>((resolve) => gates.push(resolve));
        },
        { signal: caller.signal },
      ),
    );
    expect(limits).toEqual(Array<number>(15).fill(0));
    expect(listenerLimit(caller.signal)).toBe(0);
    expect(getEventListeners(caller.signal, 'abort')).toHaveLength(15);
    for (const open of gates) open();
    await Promise.all(calls);
    expect(getEventListeners(caller.signal, 'abort')).toHaveLength(0);
  });

  it('an outer timeout that ends first aborts the signal the callback sees under an inner timeout', async () => {
    const time = new FakeTimeProvider();
    const pipeline = new ResiliencePipelineBuilder({ timeProvider: time })
      .addTimeout({ timeout: 100, mode })
      .addTimeout({ timeout: 1_000, mode })
      .build();
    let inner: AbortSignal | undefined;
    const result = pipeline
      .execute(({ signal }) => {
        inner = signal;
        return new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason)));
      })
      .catch((e: unknown) => e);
    await time.advanceAsync(100);
    expect(inner!.aborted).toBe(true);
    await expect(result).resolves.toMatchObject({ timeout: 100 });
    expect(time.pendingTimerCount).toBe(0);
  });

  it('a cancellation source aborts the signal the callback sees under the timeout', async () => {
    const time = new FakeTimeProvider();
    const controller = new AbortController();
    const source = {
      get aborted() {
        return controller.signal.aborted;
      },
      get reason(): unknown {
        return controller.signal.reason as unknown;
      },
      get signal() {
        return controller.signal;
      },
    };
    const reason = new Error('source gave up');
    const result = pipelineOn(time).execute(
      ({ signal }) => new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason))),
      { cancellation: source },
    );
    controller.abort(reason);
    await expect(result).rejects.toBe(reason);
  });
});

describe('the scope of a call given no signal', () => {
  it('can never abort: no reason, and a signal of its own that never aborts', () => {
    const scope = NoCancellationScope.instance;
    expect(scope.canAbort).toBe(false);
    expect(scope.aborted).toBe(false);
    expect(scope.reason).toBeUndefined();
    const signal = scope.signal;
    expect(signal.aborted).toBe(false);
    expect(scope.signal).not.toBe(signal);
  });
});
