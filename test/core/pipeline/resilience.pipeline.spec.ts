import { describe, expect, it } from '@jest/globals';
import {
  ResilienceContext,
  ResiliencePipeline,
  ResiliencePipelineBuilder,
  ResiliencePropertyKey,
  ResilienceValidationError,
  type ResilienceStrategy,
} from '../../../src/core.entry.js';
import { FakeTimeProvider } from '../../../src/testing/index.js';
import { RecordingListener } from '../../utils/recording.listener.js';
import { scripted } from '../../utils/flaky.js';

/** A strategy that records when it enters and leaves. */
function tracer(name: string, log: string[]): ResilienceStrategy<unknown> {
  return {
    execute: async (next, context) => {
      log.push(`>${name}`);
      try {
        return await next(context);
      } finally {
        log.push(`<${name}`);
      }
    },
  };
}

function traced(builder: ResiliencePipelineBuilder, name: string, log: string[]) {
  return builder.addStrategy({ type: 'tracer', options: {}, create: () => tracer(name, log) });
}

describe('resilience pipeline', () => {
  it('runs the first strategy added as the outermost', async () => {
    const log: string[] = [];
    const builder = new ResiliencePipelineBuilder();
    traced(traced(traced(builder, 'a', log), 'b', log), 'c', log);
    await builder.build().execute(() => log.push('fn'));
    expect(log).toEqual(['>a', '>b', '>c', 'fn', '<c', '<b', '<a']);
  });

  it('nests pipelines in place, sharing their strategies', async () => {
    const log: string[] = [];
    const inner = traced(new ResiliencePipelineBuilder(), 'inner', log).build();
    const outer = traced(new ResiliencePipelineBuilder(), 'outer', log).addPipeline(inner);
    await traced(outer, 'innermost', log)
      .build()
      .execute(() => log.push('fn'));
    expect(log).toEqual(['>outer', '>inner', '>innermost', 'fn', '<innermost', '<inner', '<outer']);
  });

  it('executes sync and async callbacks, and thenables', async () => {
    const pipeline = new ResiliencePipelineBuilder().addRetry({ delay: 0 }).build();
    await expect(pipeline.execute(() => 1)).resolves.toBe(1);
    await expect(pipeline.execute(async () => 2)).resolves.toBe(2);
    const thenable = { then: (resolve: (v: number) => void) => resolve(3) };
    await expect(pipeline.execute(() => thenable as unknown as Promise<number>)).resolves.toBe(3);
    await expect(ResiliencePipeline.empty.execute(() => 4)).resolves.toBe(4);
    // A pipeline made without components (as \`empty\` is, and a reload's retired pipeline) runs the callback as it is.
    await expect(new ResiliencePipeline(undefined).execute(() => 5)).resolves.toBe(5);
  });

  it('executeOutcome returns outcomes and never rejects, even for non-Error throws', async () => {
    const pipeline = new ResiliencePipelineBuilder().build();
    await expect(pipeline.executeOutcome(() => 'v')).resolves.toEqual({ ok: true, value: 'v' });
    await expect(
      pipeline.executeOutcome(() => {
        throw null;
      }),
    ).resolves.toEqual({ ok: false, error: null });
    await expect(pipeline.executeOutcome(scripted({ throws: new Error('x') }))).resolves.toMatchObject({ ok: false });
  });

  it("carries typed properties, the operation key and the caller's signal through the context", async () => {
    const Tenant = new ResiliencePropertyKey<string>('tenant');
    const Attempts = new ResiliencePropertyKey<number>('attempts');
    const controller = new AbortController();
    const context = new ResilienceContext({ operationKey: 'get-user', signal: controller.signal });
    context.properties.set(Tenant, 'acme');
    const pipeline = new ResiliencePipelineBuilder()
      .addRetry({
        delay: 0,
        onRetry: ({ context: ctx }) => {
          ctx.properties.set(Attempts, ctx.properties.getOrDefault(Attempts, 0) + 1);
        },
      })
      .build();
    let fails = 2;
    const seen = await pipeline.execute((ctx) => {
      if (fails-- > 0) throw new Error('again');
      return { key: ctx.operationKey, tenant: ctx.properties.get(Tenant), signal: ctx.signal };
    }, context);
    expect(seen).toEqual({ key: 'get-user', tenant: 'acme', signal: controller.signal });
    expect(context.properties.get(Attempts)).toBe(2);
    expect(context.properties.has(new ResiliencePropertyKey<string>('tenant'))).toBe(true);
  });

  it('gives a callback without a caller signal its own never-aborted signal', async () => {
    const pipeline = new ResiliencePipelineBuilder().build();
    const [a, b] = await Promise.all([pipeline.execute((c) => c.signal), pipeline.execute((c) => c.signal)]);
    expect(a.aborted).toBe(false);
    expect(a).not.toBe(b);
  });

  it('restores the callback when a context is reused by a nested pipeline call', async () => {
    const inner = new ResiliencePipelineBuilder().build();
    const outer = new ResiliencePipelineBuilder().addRetry({ delay: 0 }).build();
    const context = new ResilienceContext();
    let outerCalls = 0;
    const result = await outer.execute(async (ctx) => {
      outerCalls++;
      const value = await inner.execute(() => 'inner', ctx);
      if (outerCalls < 2) throw new Error('retry the outer callback');
      return `${value}+outer`;
    }, context);
    expect(result).toBe('inner+outer');
    expect(outerCalls).toBe(2);
  });

  it("turns a custom strategy's synchronous throw into a rejection", async () => {
    const pipeline = new ResiliencePipelineBuilder()
      .addStrategy({
        type: 'broken',
        options: {},
        create: () => ({
          execute: () => {
            throw new Error('bug in strategy');
          },
        }),
      })
      .build();
    await expect(pipeline.execute(() => 1)).rejects.toThrow('bug in strategy');
  });

  describe('validation', () => {
    it('lists every invalid option of every strategy in one error, with path, value and rule', () => {
      const builder = new ResiliencePipelineBuilder({ name: 'orders' })
        .addRetry({
          maxRetryAttempts: -1,
          delay: Number.NaN,
          backoffType: 'fibonacci' as 'linear',
          maxDelayy: 3,
        } as never)
        .addTimeout({ timeout: 0 })
        .addFallback({});
      let error: ResilienceValidationError | undefined;
      try {
        builder.build();
      } catch (e) {
        error = e as ResilienceValidationError;
      }
      expect(error).toBeInstanceOf(ResilienceValidationError);
      expect(error!.issues.map((i) => i.path)).toEqual([
        'pipeline "orders".strategies[0] (retry).maxDelayy',
        'pipeline "orders".strategies[0] (retry).maxRetryAttempts',
        'pipeline "orders".strategies[0] (retry).delay',
        'pipeline "orders".strategies[0] (retry).backoffType',
        'pipeline "orders".strategies[1] (timeout).timeout',
        'pipeline "orders".strategies[2] (fallback).fallbackAction',
      ]);
      expect(error!.message).toContain('6 problems');
      expect(error!.message).toContain('maxRetryAttempts: -1 must be an integer >= 0');
      expect(error!.message).toContain('backoffType: "fibonacci" must be one of "constant", "linear", "exponential"');
      expect(error!.message).toContain('maxDelayy: 3 is not a known option');
    });

    it('rejects maxDelay below delay and both fallbackValue and fallbackAction', () => {
      expect(() =>
        new ResiliencePipelineBuilder()
          .addRetry({ delay: 1_000, maxDelay: 10 })
          .addFallback({ fallbackValue: 1, fallbackAction: () => 2 })
          .build(),
      ).toThrow(/maxDelay: 10 must be >= delay \(1000\)[\s\S]*fallbackValue: 1 must not be given together/);
    });

    it('validates builder options', () => {
      expect(() =>
        new ResiliencePipelineBuilder({ timeProvider: {} as never, telemetryListeners: [{}] as never }).build(),
      ).toThrow(/options.timeProvider[\s\S]*options.telemetryListeners\[0\]/);
    });

    it('builds once', () => {
      const builder = new ResiliencePipelineBuilder();
      builder.build();
      expect(() => builder.build()).toThrow(/cannot be changed or built again/);
      expect(() => builder.addRetry()).toThrow(ResilienceValidationError);
    });
  });

  describe('telemetry', () => {
    it('reports pipeline start and end with the outcome and duration', async () => {
      const time = new FakeTimeProvider();
      const listener = new RecordingListener();
      const pipeline = new ResiliencePipelineBuilder({
        name: 'p',
        timeProvider: time,
        telemetryListeners: [listener],
      }).build();
      const result = pipeline.execute(() => time.delay(25).then(() => 'x'));
      await time.advanceAsync(25);
      await result;
      const executed = listener.events.find((e) => e.eventName === 'PipelineExecuted');
      expect(executed?.arguments).toEqual({ outcome: { ok: true, value: 'x' }, duration: 25 });
      expect(executed?.severity).toBe('information');
    });

    it('never lets a throwing listener break a call', async () => {
      const pipeline = new ResiliencePipelineBuilder({
        telemetryListeners: [
          {
            write: () => {
              throw new Error('listener bug');
            },
          },
        ],
      })
        .addRetry({ delay: 0 })
        .build();
      await expect(pipeline.execute(scripted({ throws: new Error('x') }, { returns: 'ok' }))).resolves.toBe('ok');
    });
  });
});
