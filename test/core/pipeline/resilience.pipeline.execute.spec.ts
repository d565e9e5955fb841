import { describe, expect, it } from '@jest/globals';
import {
  ResilienceContext,
  ResiliencePipeline,
  ResiliencePipelineBuilder,
  type ResilienceStrategy,
} from '../../../src/core.entry.js';
import { FakeTimeProvider } from '../../../src/testing/index.js';
import { RecordingListener } from '../../utils/recording.listener.js';

const down = new Error('down');

function flakyOnce<T>(value: T) {
  let calls = 0;
  return () => {
    if (calls++ === 0) throw down;
    return value;
  };
}

describe('ResiliencePipeline.execute', () => {
  it.each([
    ['without telemetry', false],
    ['with telemetry', true],
  ])(
    '%s: a nested call on the same context gets its own callback and attempt count, the outer ones come back',
    async (_, listened) => {
      const listeners = listened ? [new RecordingListener()] : [];
      const outer = new ResiliencePipelineBuilder({ telemetryListeners: listeners })
        .addRetry({ maxRetryAttempts: 1, delay: 0 })
        .build();
      const inner = new ResiliencePipelineBuilder({ telemetryListeners: listeners })
        .addRetry({ maxRetryAttempts: 2, delay: 0 })
        .build();
      const seen: string[] = [];
      const innerFlaky = flakyOnce('inner');
      let outerCalls = 0;
      const result = await outer.execute(async (ctx) => {
        seen.push(`outer ${ctx.attemptNumber}`);
        const value = await inner.execute((c) => {
          seen.push(`inner ${c.attemptNumber}`);
          return innerFlaky();
        }, ctx);
        seen.push(`back ${ctx.attemptNumber} ${value}`);
        if (outerCalls++ === 0) throw down;
        return 'outer';
      });
      expect(result).toBe('outer');
      expect(seen).toEqual(['outer 0', 'inner 0', 'inner 1', 'back 0 inner', 'outer 1', 'inner 0', 'back 1 inner']);
    },
  );

  it('a nested call that fails still restores the outer callback', async () => {
    const outer = new ResiliencePipelineBuilder().addRetry({ maxRetryAttempts: 1, delay: 0 }).build();
    const inner = new ResiliencePipelineBuilder().build();
    const seen: string[] = [];
    let outerCalls = 0;
    const result = await outer.execute(async (ctx) => {
      seen.push('outer');
      if (outerCalls++ === 0) await inner.execute(() => Promise.reject(down), ctx);
      return 'done';
    });
    expect(result).toBe('done');
    expect(seen).toEqual(['outer', 'outer']);
  });

  it.each([
    ['without telemetry', []],
    ['with telemetry', [new RecordingListener()]],
  ])('%s: a context used without state gets no state slot (contexts stay small)', async (_, listeners) => {
    const pipeline = new ResiliencePipelineBuilder({ telemetryListeners: listeners }).addTimeout(1_000).build();
    const context = new ResilienceContext();
    await pipeline.execute(() => 1, context);
    await pipeline.execute(() => 1);
    expect(Object.keys(context)).not.toContain('_state');
  });

  it('with telemetry, state reaches the callback and is gone from the context afterwards', async () => {
    const pipeline = new ResiliencePipelineBuilder({ telemetryListeners: [new RecordingListener()] }).build();
    const context = new ResilienceContext();
    await expect(pipeline.execute((_c, state: number) => state * 2, context, 21)).resolves.toBe(42);
    await expect(pipeline.execute((_c, state: number | undefined) => state, context)).resolves.toBeUndefined();
  });

  it('reports a failed execution as an error with its outcome and duration, after the debug start', async () => {
    const time = new FakeTimeProvider(5_000);
    const listener = new RecordingListener();
    const pipeline = new ResiliencePipelineBuilder({ timeProvider: time, telemetryListeners: [listener] }).build();
    const context = new ResilienceContext({ operationKey: 'op' });
    const result = pipeline.execute(async () => {
      await time.delay(30);
      throw down;
    }, context);
    const settled = expect(result).rejects.toBe(down);
    await time.advanceAsync(30);
    await settled;
    expect(listener.events.map((e) => [e.eventName, e.severity, e.context === context, e.arguments])).toEqual([
      ['PipelineExecuting', 'debug', true, {}],
      ['PipelineExecuted', 'error', true, { outcome: { ok: false, error: down }, duration: 30 }],
    ]);
  });

  it('executeOutcome turns a failure into an outcome', async () => {
    await expect(ResiliencePipeline.empty.executeOutcome(() => Promise.reject(down))).resolves.toEqual({
      ok: false,
      error: down,
    });
  });

  it('runs the callback with the caller context it was given', async () => {
    const context = new ResilienceContext({ operationKey: 'given' });
    const pipeline = new ResiliencePipelineBuilder().addTimeout(1_000).addRetry().build();
    await expect(pipeline.execute((ctx) => ctx.operationKey, context)).resolves.toBe('given');
    await expect(ResiliencePipeline.empty.execute((ctx) => ctx, context)).resolves.toBe(context);
  });
});

describe('ResiliencePipeline.asStrategy', () => {
  it('is one strategy object per pipeline', () => {
    const pipeline = new ResiliencePipelineBuilder().addTimeout(1_000).build();
    expect(pipeline.asStrategy()).toBe(pipeline.asStrategy());
  });

  it("runs the pipeline's strategies in its place, on the outer call's context and callback", async () => {
    const order: string[] = [];
    const tracer = (name: string): ResilienceStrategy<unknown> => ({
      execute: async (next, context) => {
        order.push(`>${name} ${context.attemptNumber}`);
        try {
          return await next(context);
        } finally {
          order.push(`<${name}`);
        }
      },
    });
    const nested = new ResiliencePipelineBuilder()
      .addStrategy({ type: 'a', options: {}, create: () => tracer('a') })
      .addStrategy({ type: 'b', options: {}, create: () => tracer('b') })
      .build();
    const pipeline = new ResiliencePipelineBuilder()
      .addRetry({ maxRetryAttempts: 1, delay: 0 })
      .addStrategy({ type: 'nested', options: {}, create: () => nested.asStrategy() })
      .addStrategy({ type: 'c', options: {}, create: () => tracer('c') })
      .build();
    const flaky = flakyOnce('ok');
    await expect(
      pipeline.execute(() => {
        order.push('callback');
        return flaky();
      }),
    ).resolves.toBe('ok');
    expect(order).toEqual([
      '>a 0',
      '>b 0',
      '>c 0',
      'callback',
      '<c',
      '<b',
      '<a',
      '>a 1',
      '>b 1',
      '>c 1',
      'callback',
      '<c',
      '<b',
      '<a',
    ]);
  });

  it('of an empty pipeline passes the call on', async () => {
    const pipeline = new ResiliencePipelineBuilder()
      .addStrategy({ type: 'nested', options: {}, create: () => ResiliencePipeline.empty.asStrategy() })
      .build();
    await expect(pipeline.execute(() => 'through')).resolves.toBe('through');
  });
});

describe('ResiliencePipeline.dispose', () => {
  it("waits for every strategy's dispose, skipping those without one", async () => {
    const disposed: string[] = [];
    let finish: () => void = () => undefined;
    const withDispose = (name: string, wait: boolean): ResilienceStrategy<unknown> => ({
      execute: (next, context) => next(context),
      dispose: () => {
        disposed.push(name);
        return wait ? new Promise<void>((resolve) => (finish = resolve)) : undefined;
      },
    });
    const pipeline = new ResiliencePipelineBuilder()
      .addStrategy({ type: 'a', options: {}, create: () => withDispose('a', true) })
      .addStrategy({ type: 'plain', options: {}, create: () => ({ execute: (next, context) => next(context) }) })
      .addStrategy({ type: 'b', options: {}, create: () => withDispose('b', false) })
      .build();
    let done = false;
    const disposing = pipeline.dispose().then(() => (done = true));
    expect(disposed).toEqual(['a', 'b']);
    await Promise.resolve();
    await Promise.resolve();
    expect(done).toBe(false);
    finish();
    await disposing;
    expect(done).toBe(true);
  });

  it('of the empty pipeline does nothing', async () => {
    await expect(ResiliencePipeline.empty.dispose()).resolves.toBeUndefined();
  });
});
