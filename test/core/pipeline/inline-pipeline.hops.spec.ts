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

/**
 * The fast paths of strategies that need no continuation of their own: each keeps a call at the hops the
 * pipeline itself costs, and a failure or a state change costs only what it must.
 */
describe('promise hops of strategies with a fast path', () => {
  it.each<[string, (b: ResiliencePipelineBuilder) => ResiliencePipelineBuilder, number]>([
    // Static options decide at once; only generators need the asynchronous decision.
    [
      'a chaos fault with static options that does not inject',
      (b) => b.addChaosFault({ injectionRate: 0, fault: new Error('x') }),
      1,
    ],
    // A success never reaches a fallback with the default predicate.
    ['a fallback, for a value', (b) => b.addFallback({ fallbackValue: 0 }), 2],
    // A time-based lease has nothing to give back when the call ends.
    [
      'a token-bucket rate limiter',
      (b) => b.addRateLimiter({ kind: 'token-bucket', tokenLimit: 10, tokensPerPeriod: 1, replenishmentPeriod: 1_000 }),
      1,
    ],
    [
      'a fixed-window rate limiter',
      (b) => b.addRateLimiter({ kind: 'fixed-window', permitLimit: 10, window: 1_000 }),
      1,
    ],
    // A predicate that answers synchronously is not awaited.
    ['a circuit breaker with a synchronous predicate', (b) => b.addCircuitBreaker({ shouldHandle: () => false }), 2],
  ])('%s', async (_, shape, expected) => {
    const pipeline = shape(new ResiliencePipelineBuilder()).build();
    expect(await microtaskTurns(pipeline.execute(() => 1))).toBe(expected);
  });

  it('a retry after a zero delay (no callbacks) runs the next attempt without waiting on a promise', async () => {
    const pipeline = new ResiliencePipelineBuilder().addRetry({ delay: 0 }).build();
    let calls = 0;
    const call = pipeline.execute(() => {
      if (calls++ === 0) throw new Error('first attempt fails');
      return 1;
    });
    expect(await microtaskTurns(call)).toBe(4);
    expect(calls).toBe(2);
  });

  it.each<[string, Parameters<ResiliencePipelineBuilder['addCircuitBreaker']>[0]]>([
    ['without callbacks', { failureThreshold: 1 }],
    [
      'with callbacks that return nothing',
      { failureThreshold: 1, onOpened: () => undefined, onStateChange: () => undefined },
    ],
  ])('a failure that opens the circuit is reported without waiting for callbacks (%s)', async (_, options) => {
    const pipeline = new ResiliencePipelineBuilder().addCircuitBreaker({ kind: 'consecutive', ...options }).build();
    const call = pipeline.execute(() => {
      throw new Error('down');
    });
    expect(await microtaskTurns(call)).toBe(2);
  });

  it('a call queued by a concurrency limiter starts as the permit is given back', async () => {
    const pipeline = new ResiliencePipelineBuilder().addConcurrencyLimiter({ permitLimit: 1, queueLimit: 1 }).build();
    let release!: () => void;
    const holder = pipeline.execute(() => new Promise<number>((resolve) => (release = () => resolve(1))));
    const queued = pipeline.execute(() => 2);
    await Promise.resolve();
    release();
    expect(await microtaskTurns(queued)).toBe(4);
    await expect(holder).resolves.toBe(1);
  });
});
