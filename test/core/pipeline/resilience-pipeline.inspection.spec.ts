import { describe, expect, it } from '@jest/globals';
import {
  ResilienceContext,
  ResiliencePipelineBuilder,
  ResiliencePipelineRegistry,
  type TelemetryListener,
} from '../../../src/core.entry.js';

describe('ResiliencePipeline.describe', () => {
  it('lists the strategies outermost first, a nested pipeline in its place, with their names', () => {
    const inner = new ResiliencePipelineBuilder().addCircuitBreaker({ name: 'db' }).addTimeout(1_000).build();
    const pipeline = new ResiliencePipelineBuilder()
      .addFallback({ fallbackValue: 0 })
      .addRetry({ name: 'reads', maxRetryAttempts: 1 })
      .addPipeline(inner)
      .build();

    expect(pipeline.describe()).toEqual([
      { type: 'fallback', name: undefined },
      { type: 'retry', name: 'reads' },
      { type: 'circuit-breaker', name: 'db' },
      { type: 'timeout', name: undefined },
    ]);
    expect(new ResiliencePipelineBuilder().build().describe()).toEqual([]);
  });

  it('follows a registry pipeline across a reload', async () => {
    const registry = new ResiliencePipelineRegistry({ pipelines: { orders: { retry: { maxRetryAttempts: 1 } } } });
    const handle = registry.getPipeline('orders');
    expect(handle.describe().map((s) => s.type)).toEqual(['retry']);

    await registry.reload('orders', { timeout: 100, retry: { maxRetryAttempts: 1 } });
    expect(handle.describe().map((s) => s.type)).toEqual(['retry', 'timeout']);
  });
});

describe('ResilienceContext.wrapCallback', () => {
  it('runs every attempt of the callback inside the wrapper, with its context and state', async () => {
    const around: string[] = [];
    // A listener wraps the callback when the pipeline starts, as a tracing listener does.
    const listener: TelemetryListener = {
      write(event) {
        if (event.eventName !== 'PipelineExecuting') return;
        event.context.wrapCallback((run) => {
          around.push('enter');
          try {
            return run();
          } finally {
            around.push('leave');
          }
        });
      },
    };
    const pipeline = new ResiliencePipelineBuilder({ telemetryListeners: [listener] })
      .addRetry({ maxRetryAttempts: 1, delay: 0 })
      .build();
    const seen: unknown[] = [];

    const result = await pipeline.execute(
      (context, state: string) => {
        seen.push([context.attemptNumber, state]);
        around.push('run');
        if (context.attemptNumber === 0) throw new Error('first');
        return 'ok';
      },
      undefined,
      'state',
    );

    expect(result).toBe('ok');
    expect(seen).toEqual([
      [0, 'state'],
      [1, 'state'],
    ]);
    expect(around).toEqual(['enter', 'run', 'leave', 'enter', 'run', 'leave']);
  });

  it('does nothing outside an execution, and a later call runs its callback unwrapped', async () => {
    const pipeline = new ResiliencePipelineBuilder().build();
    const context = new ResilienceContext();
    let wrapped = 0;
    context.wrapCallback((run) => {
      wrapped++;
      return run();
    });

    await expect(pipeline.execute(() => 1, context)).resolves.toBe(1);
    expect(wrapped).toBe(0);
  });
});
