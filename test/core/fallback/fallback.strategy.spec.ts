import { describe, expect, it, jest } from '@jest/globals';
import { handleError, handleResult, ResiliencePipelineBuilder } from '../../../src/core.entry.js';
import { scripted } from '../../utils/flaky.js';
import { RecordingListener } from '../../utils/recording.listener.js';

class PaymentDeclined extends Error {}

describe('fallback strategy', () => {
  it('returns the fallback value instead of a handled error', async () => {
    const pipeline = new ResiliencePipelineBuilder<string>().addFallback({ fallbackValue: 'cached' }).build();
    await expect(pipeline.execute(scripted<string>({ throws: new Error('down') }))).resolves.toBe('cached');
    await expect(pipeline.execute(() => 'live')).resolves.toBe('live');
  });

  it('calls fallbackAction with the outcome and the context', async () => {
    const error = new Error('bank A down');
    const fallbackAction = jest.fn(({ outcome }: { outcome: { ok: boolean } }) =>
      outcome.ok ? 'n/a' : 'paid via bank B',
    );
    const onFallback = jest.fn<() => void>();
    const listener = new RecordingListener();
    const pipeline = new ResiliencePipelineBuilder<string>({ telemetryListeners: [listener] })
      .addFallback({ fallbackAction, onFallback })
      .build();
    await expect(pipeline.execute(scripted<string>({ throws: error }), { operationKey: 'pay' })).resolves.toBe(
      'paid via bank B',
    );
    expect(fallbackAction).toHaveBeenCalledWith(
      expect.objectContaining({
        outcome: { ok: false, error },
        context: expect.objectContaining({ operationKey: 'pay' }),
      }),
    );
    expect(onFallback).toHaveBeenCalledTimes(1);
    expect(listener.events.find((e) => e.eventName === 'OnFallback')).toMatchObject({
      severity: 'warning',
      arguments: { outcome: { ok: false, error } },
    });
  });

  it('leaves unhandled errors alone', async () => {
    const pipeline = new ResiliencePipelineBuilder<string>()
      .addFallback({ fallbackValue: 'x', shouldHandle: handleError(PaymentDeclined) })
      .build();
    const other = new TypeError('bug');
    await expect(pipeline.execute(scripted<string>({ throws: other }))).rejects.toBe(other);
    await expect(pipeline.execute(scripted<string>({ throws: new PaymentDeclined() }))).resolves.toBe('x');
  });

  it('replaces handled results', async () => {
    const pipeline = new ResiliencePipelineBuilder<number | null>()
      .addFallback({ fallbackValue: 0, shouldHandle: handleResult<number | null>(null) })
      .build();
    await expect(pipeline.execute(() => null)).resolves.toBe(0);
    await expect(pipeline.execute(() => 5)).resolves.toBe(5);
  });

  it('fails with the error a fallback action throws', async () => {
    const secondary = new Error('bank B down too');
    const pipeline = new ResiliencePipelineBuilder<string>()
      .addFallback({
        fallbackAction: () => {
          throw secondary;
        },
      })
      .build();
    await expect(pipeline.execute(scripted<string>({ throws: new Error('A') }))).rejects.toBe(secondary);
  });

  it('does not replace cancellation by default', async () => {
    const pipeline = new ResiliencePipelineBuilder<string>().addFallback({ fallbackValue: 'x' }).build();
    await expect(pipeline.execute(() => 'never', { signal: AbortSignal.abort() })).rejects.toMatchObject({
      name: 'AbortError',
    });
  });
});
