import { describe, expect, it } from '@jest/globals';
import {
  InMemoryCircuitBreakerStateStore,
  ResilienceContext,
  ResiliencePipeline,
  ResiliencePipelineBuilder,
  type CircuitCallResult,
  type CircuitPermit,
  type CircuitPolicy,
  type ResilienceStrategy,
  type TimeoutMode,
  type TimerHandle,
} from '../../../src/core.entry.js';
import { FakeTimeProvider } from '../../../src/testing/index.js';

const storeDown = new Error('state store down');

/** An in-memory store that throws synchronously on the calls listed (counted per operation from 1). */
class FaultyStore extends InMemoryCircuitBreakerStateStore {
  acquires = 0;
  successes = 0;

  constructor(
    private readonly failAcquire: number[],
    private readonly failSuccess: number[],
  ) {
    super();
  }

  override acquire(key: string, policy: CircuitPolicy, now: number) {
    if (this.failAcquire.includes(++this.acquires)) throw storeDown;
    return super.acquire(key, policy, now);
  }

  override record(key: string, policy: CircuitPolicy, permit: CircuitPermit, result: CircuitCallResult, now: number) {
    if (result === 'success' && this.failSuccess.includes(++this.successes)) throw storeDown;
    return super.record(key, policy, permit, result, now);
  }
}

const passThrough: ResilienceStrategy<unknown> = { execute: (next, context) => next(context) };

async function run(separated: boolean, failAcquire: number[], failSuccess: number[]): Promise<string[]> {
  const builder = new ResiliencePipelineBuilder().addRetry({ maxRetryAttempts: 2, delay: 0 });
  if (separated) builder.addStrategy({ type: 'gap', options: {}, create: () => passThrough });
  const log: string[] = [];
  builder.addCircuitBreaker({
    kind: 'consecutive',
    failureThreshold: 1,
    breakDuration: 60_000,
    circuitKey: 'db',
    stateStore: new FaultyStore(failAcquire, failSuccess),
    onStateChange: ({ from, to }) => void log.push(`${from}→${to}`),
  });
  if (separated) builder.addStrategy({ type: 'gap', options: {}, create: () => passThrough });
  const pipeline = builder.addTimeout(1_000).build();
  for (let call = 0; call < 3; call++) {
    let result: unknown;
    try {
      // execute must never throw synchronously, whatever the store does.
      const pending = pipeline.execute((ctx) => {
        log.push(`call ${call} attempt ${ctx.attemptNumber}`);
        return 'ok';
      });
      result = await pending.then(
        (v) => v,
        (e: Error) => `✗ ${e.message}`,
      );
    } catch (error) {
      result = `threw ${(error as Error).message}`;
    }
    log.push(`call ${call} → ${String(result)}`);
  }
  return log;
}

describe('a state store that throws, inside an inline run', () => {
  it.each<[string, number[], number[]]>([
    ['on the first admission', [1], []],
    ['on every admission', [1, 2, 3, 4, 5, 6, 7, 8, 9], []],
    ['on recording the first success', [], [1]],
    ['on recording every success', [], [1, 2, 3, 4, 5, 6, 7, 8, 9]],
    ['on both, alternately', [1, 3], [2]],
  ])('%s: the outer retry sees a failure, exactly as with the strategies one by one', async (_, acquire, success) => {
    const inline = await run(false, acquire, success);
    const separate = await run(true, acquire, success);
    expect(inline).toEqual(separate);
    expect(inline.some((line) => line.includes('threw'))).toBe(false);
  });

  it('the first admission failing is retried and then succeeds', async () => {
    expect(await run(false, [1], [])).toEqual([
      'call 0 attempt 1',
      'call 0 → ok',
      'call 1 attempt 0',
      'call 1 → ok',
      'call 2 attempt 0',
      'call 2 → ok',
    ]);
  });
});

describe('a strategy of its own that throws synchronously', () => {
  it('is a failure to the strategies around it, also inside a nested pipeline', async () => {
    let throws = 1;
    const faulty: ResilienceStrategy<unknown> = {
      execute: (next, context) => {
        if (throws-- > 0) throw new Error('strategy bug');
        return next(context);
      },
    };
    const direct = new ResiliencePipelineBuilder()
      .addRetry({ maxRetryAttempts: 1, delay: 0 })
      .addStrategy({ type: 'faulty', options: {}, create: () => faulty })
      .build();
    await expect(direct.execute(() => 'ok')).resolves.toBe('ok');
    throws = 1;
    const nested = new ResiliencePipelineBuilder()
      .addRetry({ maxRetryAttempts: 1, delay: 0 })
      .addStrategy({ type: 'faulty', options: {}, create: () => faulty })
      .build();
    const outer = new ResiliencePipelineBuilder()
      .addStrategy({ type: 'nested', options: {}, create: () => nested.asStrategy() })
      .build();
    await expect(outer.execute(() => 'ok')).resolves.toBe('ok');
    throws = 5;
    await expect(direct.execute(() => 'ok')).rejects.toThrow('strategy bug');
  });
});

describe('a strategy of its own right after two inline ones', () => {
  it('ends their run: it runs through its execute, between them and the strategies after it', async () => {
    const order: string[] = [];
    const custom: ResilienceStrategy<unknown> = {
      execute: (next, context) => {
        order.push('custom');
        return next(context);
      },
    };
    const pipeline = new ResiliencePipelineBuilder()
      .addCircuitBreaker()
      .addCircuitBreaker()
      .addStrategy({ type: 'custom', options: {}, create: () => custom })
      .addCircuitBreaker()
      .addTimeout(1_000)
      .build();
    await expect(
      pipeline.execute(() => {
        order.push('callback');
        return 'ok';
      }),
    ).resolves.toBe('ok');
    expect(order).toEqual(['custom', 'callback']);
  });
});

describe('a call whose context is already cancelled', () => {
  it.each([
    ['the empty pipeline', () => ResiliencePipeline.empty],
    ['an inline run', () => new ResiliencePipelineBuilder().addRetry().addCircuitBreaker().addTimeout(1_000).build()],
  ])('%s does not run the callback and rejects with the reason', async (_, make) => {
    const reason = new Error('caller left');
    let called = false;
    const context = new ResilienceContext({ signal: AbortSignal.abort(reason) });
    await expect(
      make().execute(() => {
        called = true;
        return 1;
      }, context),
    ).rejects.toBe(reason);
    expect(called).toBe(false);
  });
});

describe('state through nested calls on one context', () => {
  it.each([
    ['without telemetry', false],
    ['with telemetry', true],
  ])('%s: each call sees its own state; the outer state comes back after the inner call', async (_, listened) => {
    const listeners = listened ? [{ write: () => undefined }] : [];
    const outer = new ResiliencePipelineBuilder({ telemetryListeners: listeners })
      .addRetry({ maxRetryAttempts: 1, delay: 0 })
      .build();
    const inner = new ResiliencePipelineBuilder({ telemetryListeners: listeners }).addTimeout(1_000).build();
    const seen: string[] = [];
    let attempts = 0;
    await outer.execute(
      async (ctx, state: string) => {
        seen.push(state);
        await inner.execute((_c, innerState: string) => seen.push(innerState), ctx, 'inner');
        await inner.execute((_c, none: string | undefined) => seen.push(String(none)), ctx);
        if (attempts++ === 0) throw new Error('again');
      },
      undefined,
      'outer',
    );
    expect(seen).toEqual(['outer', 'inner', 'undefined', 'outer', 'inner', 'undefined']);
  });

  it('the state given to execute reaches every attempt without telemetry too', async () => {
    await expect(ResiliencePipeline.empty.execute((_c, n: number) => n + 1, undefined, 41)).resolves.toBe(42);
    const pipeline = new ResiliencePipelineBuilder().addTimeout(1_000).build();
    await expect(pipeline.execute((_c, n: number) => n + 1, new ResilienceContext(), 1)).resolves.toBe(2);
  });
});

describe('a clock whose clearTimeout throws, inside an inline run', () => {
  /** A fake clock that throws when the first `failures` timers are cleared. */
  class ThrowingClearClock extends FakeTimeProvider {
    cleared = 0;
    constructor(private readonly failures: number) {
      super();
    }
    override clearTimeout(handle: TimerHandle): void {
      super.clearTimeout(handle);
      if (++this.cleared <= this.failures) throw new Error(`clearTimeout ${this.cleared} failed`);
    }
  }

  async function run(separated: boolean, failures: number, mode: TimeoutMode, fails = false): Promise<string[]> {
    const time = new ThrowingClearClock(failures);
    const log: string[] = [];
    const builder = new ResiliencePipelineBuilder<string>({ timeProvider: time }).addRetry({
      maxRetryAttempts: 2,
      delay: 0,
      onRetry: ({ outcome }) => void log.push(`retry after ${outcome.ok ? 'ok' : (outcome.error as Error).message}`),
    });
    if (separated) builder.addStrategy({ type: 'pass-through', options: {}, create: () => passThrough });
    const pipeline = builder.addTimeout({ timeout: 1_000, mode }).build();
    const result = pipeline
      .execute(async () => (fails ? Promise.reject(new Error('own failure')) : 'ok'))
      .then(
        (value) => `→ ${value}`,
        (error: Error) => `✗ ${error.message}`,
      );
    await time.advanceAsync(0);
    log.push(await result);
    return log;
  }

  it.each<[number, TimeoutMode]>([
    [1, 'cooperative'],
    [3, 'cooperative'],
    [1, 'aggressive'],
    [3, 'aggressive'],
  ])(
    'when the timeout ends (%d failing, %s): the outer retry sees that failure, exactly as with the strategies one by one',
    async (failures, mode) => {
      const inline = await run(false, failures, mode);
      expect(inline).toEqual(await run(true, failures, mode));
      expect(inline).toEqual(
        failures === 1
          ? ['retry after clearTimeout 1 failed', '→ ok']
          : ['retry after clearTimeout 1 failed', 'retry after clearTimeout 2 failed', '✗ clearTimeout 3 failed'],
      );
    },
  );

  it.each<TimeoutMode>(['cooperative', 'aggressive'])(
    'when the timeout ends with a failure (%s): the clock failure is the one the outer retry sees',
    async (mode) => {
      const inline = await run(false, 1, mode, true);
      expect(inline).toEqual(await run(true, 1, mode, true));
      expect(inline).toEqual(['retry after clearTimeout 1 failed', 'retry after own failure', '✗ own failure']);
    },
  );
});
