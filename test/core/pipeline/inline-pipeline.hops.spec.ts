import { describe, expect, it } from '@jest/globals';
import {
  ResilienceContext,
  ResiliencePipeline,
  ResiliencePipelineBuilder,
  type ResilienceStrategy,
} from '../../../src/core.entry.js';
import { microtaskTurns } from '../../utils/microtask-turns.js';

/**
 * The fast path's observable promise: how many microtask turns a call with a synchronous callback takes to
 * settle. A run of inline strategies (retry, circuit breaker, fixed timeout) costs one promise hop however
 * many strategies it holds (up to four), so such a pipeline answers as soon as a pipeline of one strategy.
 */
const passThrough: ResilienceStrategy<unknown> = { execute: (next, context) => next(context) };
const gap = (b: ResiliencePipelineBuilder) => b.addStrategy({ type: 'gap', options: {}, create: () => passThrough });

describe('promise hops of a call', () => {
  it.each<[string, (b: ResiliencePipelineBuilder) => ResiliencePipelineBuilder, number]>([
    ['no strategy', (b) => b, 1],
    ['one timeout', (b) => b.addTimeout(1_000), 2],
    ['one retry', (b) => b.addRetry(), 2],
    ['retry, breaker and timeout in one run', (b) => b.addRetry().addCircuitBreaker().addTimeout(1_000), 2],
    ['four inline strategies in one run', (b) => b.addRetry().addCircuitBreaker().addRetry().addCircuitBreaker(), 2],
    [
      'five inline strategies: a second run',
      (b) => b.addRetry().addCircuitBreaker().addRetry().addCircuitBreaker().addTimeout(1_000),
      3,
    ],
    [
      'the same three kept apart by strategies of their own',
      (b) => gap(gap(b.addRetry()).addCircuitBreaker()).addTimeout(1_000),
      4,
    ],
    [
      'a run whose first strategy takes the call whole (a retry with onRetry)',
      (b) =>
        b
          .addRetry({ onRetry: () => undefined })
          .addCircuitBreaker()
          .addTimeout(1_000),
      3,
    ],
    ['one aggressive timeout', (b) => b.addTimeout({ timeout: 1_000, mode: 'aggressive' }), 2],
  ])('%s', async (_, shape, expected) => {
    const pipeline = shape(new ResiliencePipelineBuilder()).build();
    expect(await microtaskTurns(pipeline.execute(() => 1))).toBe(expected);
  });

  it("a listener of the pipeline's own events costs no extra hop: they run inline with its strategies", async () => {
    const listener = { write: () => undefined };
    const pipeline = new ResiliencePipelineBuilder({ telemetryListeners: [listener] })
      .addRetry()
      .addCircuitBreaker()
      .addTimeout(1_000)
      .build();
    expect(await microtaskTurns(pipeline.execute(() => 1))).toBe(2);
    expect(await microtaskTurns(pipeline.execute(() => 1, new ResilienceContext()))).toBe(2);
  });

  it('a context given by the caller (not in use by another call) costs no extra hop', async () => {
    const pipeline = new ResiliencePipelineBuilder().addRetry().addCircuitBreaker().addTimeout(1_000).build();
    expect(await microtaskTurns(pipeline.execute(() => 1, new ResilienceContext()))).toBe(2);
  });

  it('the empty pipeline runs the callback with no hop of its own', async () => {
    expect(await microtaskTurns(ResiliencePipeline.empty.execute(() => 1))).toBe(1);
  });
});
