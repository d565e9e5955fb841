import { describe, expect, it } from '@jest/globals';
import {
  ResilienceContext,
  ResiliencePipeline,
  ResiliencePipelineBuilder,
  ResiliencePropertyKey,
  type CancellationSource,
} from '../../../src/core.entry.js';
import { FakeTimeProvider } from '../../../src/testing/index.js';

/** A cancellation source that counts how often its signal is asked for. */
class CountingSource implements CancellationSource {
  signalReads = 0;
  private readonly controller = new AbortController();

  get aborted(): boolean {
    return this.controller.signal.aborted;
  }

  get reason(): unknown {
    return this.controller.signal.reason as unknown;
  }

  get signal(): AbortSignal {
    this.signalReads++;
    return this.controller.signal;
  }

  abort(reason: unknown): void {
    this.controller.abort(reason);
  }
}

const Tenant = new ResiliencePropertyKey<string>('tenant');

describe('ResilienceContext', () => {
  describe('cancellation option', () => {
    it('is observed by the strategies without its signal being read: retry stops once it aborts', async () => {
      const source = new CountingSource();
      const pipeline = new ResiliencePipelineBuilder().addRetry({ maxRetryAttempts: 5, delay: 0 }).build();
      let attempts = 0;
      const result = pipeline.execute(
        () => {
          attempts++;
          source.abort(new Error('client went away'));
          throw new Error('failed');
        },
        { cancellation: source },
      );
      await expect(result).rejects.toThrow('failed');
      expect(attempts).toBe(1);
      expect(source.signalReads).toBe(0);
    });

    it('hands its signal to a callback that reads one, and then stops the call when it aborts', async () => {
      const source = new CountingSource();
      const context = new ResilienceContext({ cancellation: source });
      expect(context.isCancellationRequested).toBe(false);
      expect(source.signalReads).toBe(0);
      const seen = await ResiliencePipeline.empty.execute((ctx) => ctx.signal, context);
      expect(seen).toBe(source.signal);
      source.abort('gone');
      expect(context.isCancellationRequested).toBe(true);
      await expect(
        new ResiliencePipelineBuilder().build().execute(() => 'late', { cancellation: source }),
      ).rejects.toBe('gone');
    });

    it('takes precedence over a signal given with it', async () => {
      const source = new CountingSource();
      const signal = new AbortController().signal;
      source.abort('from the source');
      await expect(ResiliencePipeline.empty.execute(() => 'never', { cancellation: source, signal })).rejects.toBe(
        'from the source',
      );
    });
  });

  describe('execute with state', () => {
    it('hands the same state to every attempt, so one function serves every call', async () => {
      const time = new FakeTimeProvider();
      const pipeline = new ResiliencePipelineBuilder({ timeProvider: time })
        .addRetry({ maxRetryAttempts: 2, delay: 0 })
        .build();
      const seen: Array<{ id: number }> = [];
      const callback = (_context: ResilienceContext, state: { id: number }) => {
        seen.push(state);
        if (seen.length < 3) throw new Error('again');
        return state.id;
      };
      const state = { id: 7 };
      await expect(pipeline.execute(callback, undefined, state)).resolves.toBe(7);
      expect(seen).toEqual([state, state, state]);
      expect(seen.every((s) => s === state)).toBe(true);
    });

    it('restores the outer state after a nested call on the same context', async () => {
      const outer = new ResiliencePipelineBuilder().addRetry({ maxRetryAttempts: 1, delay: 0 }).build();
      const inner = new ResiliencePipelineBuilder().build();
      const context = new ResilienceContext();
      const states: string[] = [];
      let outerAttempts = 0;
      const result = outer.execute(
        async (ctx, state: string) => {
          states.push(state);
          await inner.execute((_c, innerState: string) => states.push(innerState), ctx, 'inner');
          if (++outerAttempts === 1) throw new Error('retry the outer call');
          return state;
        },
        context,
        'outer',
      );
      await expect(result).resolves.toBe('outer');
      expect(states).toEqual(['outer', 'inner', 'outer', 'inner']);
    });

    it('works with executeOutcome', async () => {
      const outcome = await ResiliencePipeline.empty.executeOutcome((_c, n: number) => n * 2, undefined, 21);
      expect(outcome).toEqual({ ok: true, value: 42 });
    });
  });

  describe('fork', () => {
    it('copies the operation key, the attempt number and the properties, not the bag itself', () => {
      const context = new ResilienceContext({ operationKey: 'orders' });
      context.attemptNumber = 2;
      context.properties.set(Tenant, 'acme');
      const copy = context.fork();
      expect(copy).not.toBe(context);
      expect(copy.operationKey).toBe('orders');
      expect(copy.attemptNumber).toBe(2);
      expect(copy.properties.get(Tenant)).toBe('acme');
      copy.properties.set(Tenant, 'other');
      expect(context.properties.get(Tenant)).toBe('acme');
    });

    it('follows the original cancellation unless given its own', () => {
      const controller = new AbortController();
      const context = new ResilienceContext({ signal: controller.signal });
      const follows = context.fork();
      const own = new CountingSource();
      const separate = context.fork(own);
      controller.abort('caller');
      expect(follows.isCancellationRequested).toBe(true);
      expect(separate.isCancellationRequested).toBe(false);
      own.abort('own');
      expect(separate.isCancellationRequested).toBe(true);
      expect(context.fork(own).signal).toBe(own.signal);
    });

    it('runs the callback of the execution it was forked in', async () => {
      const forks: Promise<unknown>[] = [];
      const pipeline = new ResiliencePipelineBuilder()
        .addStrategy({
          type: 'twice',
          options: {},
          create: () => ({
            execute: async (next, context) => {
              forks.push(next(context.fork()));
              return next(context);
            },
          }),
        })
        .build();
      let calls = 0;
      await expect(pipeline.execute((_c, tag: string) => `${tag} ${++calls}`, undefined, 'call')).resolves.toBe(
        'call 2',
      );
      await expect(Promise.all(forks)).resolves.toEqual(['call 1']);
    });
  });
});
