import { describe, expect, it, jest } from '@jest/globals';
import { ResilienceContext, ResiliencePipelineBuilder, ResiliencePropertyKey } from '../../../src/core.entry.js';
import { FakeTimeProvider } from '../../../src/testing/index.js';
import { isPending } from '../../utils/flaky.js';
import { RecordingListener } from '../../utils/recording.listener.js';

/** An operation per attempt: resolves after `ms` with `value` (or rejects with `error`), honouring the signal. */
function operation(
  time: FakeTimeProvider,
  log: string[],
  plan: Record<number, { ms: number; value?: string; error?: Error }>,
) {
  return (ctx: ResilienceContext) => {
    const attempt = ctx.attemptNumber;
    const step = plan[attempt] ?? plan[Object.keys(plan).length - 1];
    log.push(`start ${attempt}`);
    return time.delay(step.ms, ctx.signal).then(
      () => {
        log.push(`end ${attempt}`);
        if (step.error) throw step.error;
        return step.value ?? `attempt ${attempt}`;
      },
      (reason: unknown) => {
        log.push(`aborted ${attempt}`);
        throw reason;
      },
    );
  };
}

function setup(options: Parameters<ResiliencePipelineBuilder<string>['addHedging']>[0] = {}) {
  const time = new FakeTimeProvider();
  const listener = new RecordingListener();
  const pipeline = new ResiliencePipelineBuilder<string>({ timeProvider: time, telemetryListeners: [listener] })
    .addHedging(options)
    .build();
  return { time, pipeline, listener };
}

describe('hedging strategy', () => {
  it('latency mode: starts a hedge after the delay, accepts the first result, aborts and awaits the slow primary', async () => {
    const { time, pipeline } = setup({ delay: 100, maxHedgedAttempts: 1 });
    const log: string[] = [];
    const result = pipeline.execute(operation(time, log, { 0: { ms: 1_000 }, 1: { ms: 50 } }));
    await time.advanceAsync(99);
    expect(log).toEqual(['start 0']);
    await time.advanceAsync(1);
    expect(log).toEqual(['start 0', 'start 1']);
    await time.advanceAsync(50);
    await expect(result).resolves.toBe('attempt 1');
    expect(log).toEqual(['start 0', 'start 1', 'end 1', 'aborted 0']);
    expect(time.pendingTimerCount).toBe(0);
  });

  it('returns the primary when it answers within the delay, without hedging', async () => {
    const { time, pipeline, listener } = setup({ delay: 100 });
    const log: string[] = [];
    const result = pipeline.execute(operation(time, log, { 0: { ms: 60 } }));
    await time.advanceAsync(60);
    await expect(result).resolves.toBe('attempt 0');
    expect(log).toEqual(['start 0', 'end 0']);
    expect(listener.names()).not.toContain('OnHedging');
    expect(time.pendingTimerCount).toBe(0);
  });

  it('waits for the losers to finish before returning (a loser that ignores its signal delays the result)', async () => {
    const { time, pipeline } = setup({ delay: 100 });
    let primaryDone = false;
    const result = pipeline.execute((ctx) =>
      ctx.attemptNumber === 0
        ? time.delay(500).then(() => {
            primaryDone = true;
            return 'primary';
          })
        : time.delay(10).then(() => 'hedge'),
    );
    await time.advanceAsync(110);
    expect(await isPending(result)).toBe(true);
    await time.advanceAsync(390);
    await expect(result).resolves.toBe('hedge');
    expect(primaryDone).toBe(true);
  });

  it('parallel mode (delay 0): starts every attempt at once', async () => {
    const { time, pipeline } = setup({ delay: 0, maxHedgedAttempts: 3 });
    const log: string[] = [];
    const result = pipeline.execute(
      operation(time, log, { 0: { ms: 40 }, 1: { ms: 30 }, 2: { ms: 10 }, 3: { ms: 20 } }),
    );
    await time.advanceAsync(0);
    expect(log).toEqual(['start 0', 'start 1', 'start 2', 'start 3']);
    await time.advanceAsync(10);
    await expect(result).resolves.toBe('attempt 2');
    expect(log.filter((l) => l.startsWith('aborted'))).toHaveLength(3);
  });

  it('fallback mode (delay < 0): hedges only after a failure', async () => {
    const { time, pipeline } = setup({ delay: -1, maxHedgedAttempts: 2 });
    const log: string[] = [];
    const result = pipeline.execute(
      operation(time, log, {
        0: { ms: 1_000, error: new Error('primary failed') },
        1: { ms: 10, error: new Error('second failed') },
        2: { ms: 10 },
      }),
    );
    await time.advanceAsync(999);
    expect(log).toEqual(['start 0']);
    await time.advanceAsync(1);
    expect(log).toEqual(['start 0', 'end 0', 'start 1']);
    await time.advanceAsync(20);
    await expect(result).resolves.toBe('attempt 2');
  });

  it("starts the next hedge at once when an attempt fails, and returns the primary's failure when all fail", async () => {
    const { time, pipeline } = setup({ delay: 1_000, maxHedgedAttempts: 1 });
    const primary = new Error('primary');
    const result = pipeline.execute((ctx) =>
      time
        .delay(ctx.attemptNumber === 0 ? 10 : 20)
        .then(() => Promise.reject(ctx.attemptNumber === 0 ? primary : new Error('hedge'))),
    );
    const settled = expect(result).rejects.toBe(primary);
    await time.advanceAsync(30);
    await settled;
    expect(time.pendingTimerCount).toBe(0);
  });

  it('uses the action generator for hedges; returning nothing stops hedging', async () => {
    const generated: number[] = [];
    const { time, pipeline } = setup({
      delay: 10,
      maxHedgedAttempts: 3,
      actionGenerator: ({ attemptNumber }) => {
        generated.push(attemptNumber);
        return attemptNumber === 1
          ? () => time.delay(5).then(() => Promise.reject(new Error('secondary down')))
          : undefined;
      },
    });
    const result = pipeline.execute((ctx) => time.delay(100, ctx.signal).then(() => 'primary'));
    await time.advanceAsync(15);
    expect(generated).toEqual([1, 2]); // the secondary failed at 15 ms; the generator declined a third attempt
    await time.advanceAsync(85);
    await expect(result).resolves.toBe('primary');
  });

  it('runs the secondary action from the generator and accepts it', async () => {
    const { time, pipeline } = setup({
      delay: 10,
      actionGenerator: () => () => time.delay(5).then(() => 'from secondary endpoint'),
    });
    const result = pipeline.execute((ctx) => time.delay(100, ctx.signal).then(() => 'primary'));
    await time.advanceAsync(15);
    await expect(result).resolves.toBe('from secondary endpoint');
  });

  it("gives each attempt a copy of the context and merges the accepted one's properties back", async () => {
    const { time, pipeline } = setup({ delay: 10 });
    const Endpoint = new ResiliencePropertyKey<string>('endpoint');
    const Tenant = new ResiliencePropertyKey<string>('tenant');
    const context = new ResilienceContext();
    context.properties.set(Tenant, 'acme');
    const seen: (string | undefined)[] = [];
    const result = pipeline.execute((ctx) => {
      seen.push(ctx.properties.get(Tenant));
      expect(ctx).not.toBe(context);
      ctx.properties.set(Endpoint, ctx.attemptNumber === 0 ? 'primary' : 'hedge');
      return time.delay(ctx.attemptNumber === 0 ? 100 : 1, ctx.signal).then(() => 'ok');
    }, context);
    await time.advanceAsync(11);
    await result;
    expect(seen).toEqual(['acme', 'acme']);
    expect(context.properties.get(Endpoint)).toBe('hedge');
  });

  it('stops hedging and returns the cancellation when the caller aborts', async () => {
    const { time, pipeline } = setup({ delay: 50, maxHedgedAttempts: 5 });
    const controller = new AbortController();
    const log: string[] = [];
    const result = pipeline.execute(operation(time, log, { 0: { ms: 1_000 } }), { signal: controller.signal });
    await time.advanceAsync(60);
    controller.abort(new Error('caller gone'));
    await expect(result).rejects.toThrow('caller gone');
    expect(log).toEqual(['start 0', 'start 1', 'aborted 0', 'aborted 1']);
    expect(time.pendingTimerCount).toBe(0);
  });

  it('reports each hedge through onHedging and telemetry', async () => {
    const onHedging = jest.fn<(args: { attemptNumber: number }) => void>();
    const { time, pipeline, listener } = setup({ delay: 10, maxHedgedAttempts: 2, onHedging });
    const result = pipeline.execute((ctx) =>
      time.delay(ctx.attemptNumber === 2 ? 1 : 100, ctx.signal).then(() => `${ctx.attemptNumber}`),
    );
    await time.advanceAsync(21);
    await expect(result).resolves.toBe('2');
    expect(onHedging.mock.calls.map(([a]) => a.attemptNumber)).toEqual([1, 2]);
    expect(listener.names().filter((n) => n === 'OnHedging')).toHaveLength(2);
  });

  it('validates its options', () => {
    expect(() =>
      new ResiliencePipelineBuilder().addHedging({ maxHedgedAttempts: 11, delay: Number.NaN }).build(),
    ).toThrow(/maxHedgedAttempts: 11 must be an integer >= 1 and <= 10[\s\S]*delay: NaN/);
  });
});
