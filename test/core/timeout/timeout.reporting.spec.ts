import { describe, expect, it } from '@jest/globals';
import {
  ResilienceContext,
  ResiliencePipelineBuilder,
  TimeoutRejectedError,
  type OnTimeoutArguments,
  type TimeoutMode,
} from '../../../src/core.entry.js';
import { FakeTimeProvider } from '../../../src/testing/index.js';
import { RecordingListener } from '../../utils/recording.listener.js';

describe.each<[string, TimeoutMode, boolean]>([
  ['cooperative', 'cooperative', false],
  ['aggressive', 'aggressive', false],
  ['generated cooperative', 'cooperative', true],
  ['generated aggressive', 'aggressive', true],
])('what a %s timeout reports', (_, mode, generated) => {
  function setup(onTimeout?: (args: OnTimeoutArguments) => void | Promise<void>) {
    const time = new FakeTimeProvider();
    const listener = new RecordingListener();
    const pipeline = new ResiliencePipelineBuilder({
      name: 'orders',
      timeProvider: time,
      telemetryListeners: [listener],
    })
      .addTimeout({ name: 'db', mode, onTimeout, ...(generated ? { timeoutGenerator: () => 250 } : { timeout: 250 }) })
      .build();
    return { time, listener, pipeline };
  }

  it('rejects with the timeout, where it came from, and the abort reason as cause', async () => {
    const { time, pipeline } = setup();
    const result = pipeline.execute(({ signal }) => time.delay(1_000, signal)).catch((e: unknown) => e);
    await time.advanceAsync(250);
    const error = (await result) as TimeoutRejectedError;
    expect(error).toBeInstanceOf(TimeoutRejectedError);
    expect(error.timeout).toBe(250);
    expect(error.source).toEqual({ pipelineName: 'orders', strategyName: 'db' });
    expect(error.message).toBe('The operation did not complete within the 250 ms timeout.');
    expect((error.cause as DOMException).name).toBe('TimeoutError');
  });

  it("calls onTimeout with the caller's context and the timeout, and waits for it before rejecting", async () => {
    const calls: OnTimeoutArguments[] = [];
    let finish: () => void = () => undefined;
    const { time, pipeline } = setup((args) => {
      calls.push(args);
      return new Promise<void>((resolve) => (finish = resolve));
    });
    const context = new ResilienceContext({ operationKey: 'op' });
    let settled = false;
    const result = pipeline
      .execute(({ signal }) => time.delay(1_000, signal), context)
      .catch((e: unknown) => e)
      .finally(() => (settled = true));
    await time.advanceAsync(250);
    expect(calls).toHaveLength(1);
    expect(calls[0].timeout).toBe(250);
    expect(calls[0].context.operationKey).toBe('op');
    expect(settled).toBe(false);
    finish();
    await expect(result).resolves.toBeInstanceOf(TimeoutRejectedError);
  });

  it('a failing onTimeout rejects the call with its error', async () => {
    const broken = new Error('handler bug');
    const { time, pipeline } = setup(() => Promise.reject(broken));
    const result = pipeline.execute(({ signal }) => time.delay(1_000, signal)).catch((e: unknown) => e);
    await time.advanceAsync(250);
    await expect(result).resolves.toBe(broken);
  });

  it('reports OnTimeout as an error event with the timeout', async () => {
    const { time, listener, pipeline } = setup();
    const result = pipeline.execute(({ signal }) => time.delay(1_000, signal)).catch((e: unknown) => e);
    await time.advanceAsync(250);
    await result;
    const event = listener.events.find((e) => e.eventName === 'OnTimeout');
    expect(event?.severity).toBe('error');
    expect(event?.arguments).toEqual({ timeout: 250 });
    expect(event?.source).toMatchObject({ pipelineName: 'orders', strategyName: 'db', strategyType: 'timeout' });
  });
});
