import { describe, expect, it } from '@jest/globals';
import {
  builtInStrategies,
  isRateLimiterRejectedError,
  RateLimiterRejectedError,
  ResiliencePipeline,
  ResiliencePipelineBuilder,
  ResilienceValidationError,
  strategyRegistration,
  systemTimeProvider,
  TimeoutRejectedError,
  timeoutRegistration,
  type StrategyBuilderContext,
  type StrategyDefinition,
  type StrategyPipelineInfo,
} from '../../../src/core.entry.js';
import { FakeTimeProvider } from '../../../src/testing/index.js';
import { RecordingListener } from '../../utils/recording.listener.js';

/** What `build()` throws, or `undefined`. */
function buildError(build: () => unknown): ResilienceValidationError | undefined {
  try {
    build();
  } catch (error) {
    expect(error).toBeInstanceOf(ResilienceValidationError);
    return error as ResilienceValidationError;
  }
  return undefined;
}

/** A strategy that passes calls through and records what the builder handed it. */
function probe() {
  const seen: { validated?: StrategyPipelineInfo; created?: StrategyBuilderContext } = {};
  const definition: StrategyDefinition<{ name?: string }> = {
    type: 'probe',
    events: [],
    validate: (_v, _o, pipeline) => {
      seen.validated = pipeline;
    },
    create: (_o, context) => {
      seen.created = context;
      return { execute: (next, ctx) => next(ctx) };
    },
  };
  return { definition, seen };
}

describe('ResiliencePipelineBuilder', () => {
  describe('builder options', () => {
    it('reports every invalid builder option, under options., in one error', () => {
      const error = buildError(() =>
        new ResiliencePipelineBuilder({
          name: '',
          instanceName: 5,
          random: 'dice',
          timeProvider: { now: 1 },
          telemetryListeners: 'all',
          verbose: true,
        } as never).build(),
      );
      expect(error?.issues.map((i) => `${i.path}: ${i.rule}`)).toEqual([
        'options.verbose: is not a known option',
        'options.name: must be a non-empty string',
        'options.instanceName: must be a non-empty string',
        'options.random: must be a function',
        'options.timeProvider: must be a TimeProvider',
        'options.telemetryListeners: must be an array',
      ]);
      expect(error?.message).toMatch(/^Invalid resilience options \(6 problems\)/);
    });

    it('checks each telemetry listener for a write method', () => {
      const error = buildError(() =>
        new ResiliencePipelineBuilder({
          name: 'orders',
          telemetryListeners: [new RecordingListener(), {}, null, { write: 'no' }],
        } as never).build(),
      );
      expect(error?.issues.map((i) => [i.path, i.value, i.rule])).toEqual([
        ['pipeline "orders".options.telemetryListeners[1]', {}, 'must have a write(event) method'],
        ['pipeline "orders".options.telemetryListeners[2]', null, 'must have a write(event) method'],
        ['pipeline "orders".options.telemetryListeners[3]', { write: 'no' }, 'must have a write(event) method'],
      ]);
      expect(error?.message).toMatch(/^Invalid resilience pipeline "orders" \(3 problems\)/);
    });

    it('accepts a clock of any class that has now(), and every valid option', () => {
      const clock = { now: () => 0, setTimeout: () => 0, clearTimeout: () => undefined };
      expect(
        buildError(() =>
          new ResiliencePipelineBuilder({
            name: 'a',
            instanceName: 'b',
            random: () => 0.5,
            timeProvider: clock as never,
            telemetryListeners: [],
            validationPath: 'pipelines.a',
          }).build(),
        ),
      ).toBeUndefined();
    });

    it('prefixes paths with validationPath instead of the pipeline name', () => {
      const error = buildError(() =>
        new ResiliencePipelineBuilder({ name: 'orders', validationPath: 'pipelines.orders' }).addTimeout(0).build(),
      );
      expect(error?.issues.map((i) => i.path)).toEqual(['pipelines.orders.strategies[0] (timeout).timeout']);
      expect(error?.message).toMatch(/^Invalid resilience pipeline "orders"/);
    });
  });

  describe('strategy entries', () => {
    it('names an entry by its label when it has one, else by position and type', () => {
      const error = buildError(() =>
        new ResiliencePipelineBuilder()
          .addStrategy(builtInStrategies.timeout({ timeout: -1 }))
          .addStrategy(strategyRegistration(timeoutRegistration, { timeout: -1 }, 'totalTimeout'))
          .build(),
      );
      expect(error?.issues.map((i) => i.path)).toEqual(['strategies[0] (timeout).timeout', 'totalTimeout.timeout']);
    });

    it.each([null, 5, 'x'])('reports options that are not an object (%p) without calling validate', (options) => {
      let validated = false;
      const error = buildError(() =>
        new ResiliencePipelineBuilder()
          .addStrategy({
            type: 'custom',
            options,
            validate: () => {
              validated = true;
            },
            create: () => ({ execute: (next, context) => next(context) }),
          })
          .build(),
      );
      expect(error?.issues).toEqual([
        { path: 'strategies[0] (custom).options', value: options, rule: 'must be an object' },
      ]);
      expect(validated).toBe(false);
    });

    it('reports a nested pipeline that is not a ResiliencePipeline', () => {
      const error = buildError(() =>
        new ResiliencePipelineBuilder().addPipeline({ execute: () => 1 } as never).build(),
      );
      expect(error?.issues.map((i) => `${i.path}: ${i.rule}`)).toEqual([
        'strategies[0] (pipeline).pipeline: must be a ResiliencePipeline',
      ]);
    });

    it('validates and creates each strategy with the pipeline names, clock and random source', () => {
      const { definition, seen } = probe();
      const time = new FakeTimeProvider();
      const random = () => 0.25;
      new ResiliencePipelineBuilder({ name: 'orders', instanceName: 'eu', timeProvider: time, random })
        .add(definition, { name: 'first' })
        .build();
      expect(seen.validated).toEqual({ name: 'orders', instanceName: 'eu' });
      expect(seen.created?.timeProvider).toBe(time);
      expect(seen.created?.random).toBe(random);
      expect(seen.created?.pipelineName).toBe('orders');
      expect(seen.created?.pipelineInstanceName).toBe('eu');
      expect(seen.created?.telemetry.source).toEqual({
        pipelineName: 'orders',
        pipelineInstanceName: 'eu',
        strategyName: 'first',
        strategyType: 'probe',
      });
      expect(seen.created?.telemetry.enabled).toBe(false);
    });

    it('defaults to the system clock, Math.random and no listeners', () => {
      const { definition, seen } = probe();
      new ResiliencePipelineBuilder().add(definition, {}).build();
      expect(seen.validated).toEqual({ name: undefined, instanceName: undefined });
      expect(seen.created?.timeProvider).toBe(systemTimeProvider);
      expect(seen.created?.random).toBe(Math.random);
      expect(seen.created?.telemetry.source).toEqual({
        pipelineName: undefined,
        pipelineInstanceName: undefined,
        strategyName: undefined,
        strategyType: 'probe',
      });
    });

    it('reports strategy and pipeline events with their sources to every listener', async () => {
      const time = new FakeTimeProvider();
      const listeners = [new RecordingListener(), new RecordingListener()];
      const pipeline = new ResiliencePipelineBuilder({
        name: 'orders',
        instanceName: 'eu',
        timeProvider: time,
        telemetryListeners: listeners,
      })
        .addTimeout({ timeout: 10, name: 'quick' })
        .build();
      const result = pipeline.execute(({ signal }) => time.delay(100, signal));
      const settled = expect(result).rejects.toBeInstanceOf(TimeoutRejectedError);
      await time.advanceAsync(10);
      await settled;
      for (const listener of listeners) {
        expect(listener.events.map((e) => [e.eventName, e.source])).toEqual([
          [
            'PipelineExecuting',
            { pipelineName: 'orders', pipelineInstanceName: 'eu', strategyName: undefined, strategyType: 'pipeline' },
          ],
          [
            'OnTimeout',
            { pipelineName: 'orders', pipelineInstanceName: 'eu', strategyName: 'quick', strategyType: 'timeout' },
          ],
          [
            'PipelineExecuted',
            { pipelineName: 'orders', pipelineInstanceName: 'eu', strategyName: undefined, strategyType: 'pipeline' },
          ],
        ]);
      }
    });

    it('nests an empty pipeline as nothing', async () => {
      const pipeline = new ResiliencePipelineBuilder().addPipeline(ResiliencePipeline.empty).addTimeout(100).build();
      expect(pipeline.describe()).toEqual([{ type: 'timeout', name: undefined }]);
      await expect(pipeline.execute(() => 'through')).resolves.toBe('through');
    });
  });

  describe('build once', () => {
    it.each<[string, (b: ResiliencePipelineBuilder) => unknown]>([
      ['build', (b) => b.build()],
      ['addStrategy', (b) => b.addStrategy(builtInStrategies.timeout({ timeout: 1 }))],
      ['addPipeline', (b) => b.addPipeline(ResiliencePipeline.empty)],
      ['addTimeout', (b) => b.addTimeout(1)],
    ])('refuses %s after build(), naming the builder', (_, use) => {
      const builder = new ResiliencePipelineBuilder({ name: 'orders' });
      builder.build();
      const error = buildError(() => use(builder));
      expect(error?.issues).toEqual([
        { path: 'builder', value: 'orders', rule: 'cannot be changed or built again after build()' },
      ]);
      expect(error?.message).toMatch(/^ResiliencePipelineBuilder misuse \(1 problem\)/);
    });
  });

  describe('shorthands', () => {
    it('addTimeout(ms) is addTimeout({ timeout: ms })', async () => {
      const time = new FakeTimeProvider();
      const pipeline = new ResiliencePipelineBuilder({ timeProvider: time }).addTimeout(50).build();
      const result = pipeline.execute(({ signal }) => time.delay(100, signal));
      const settled = expect(result).rejects.toMatchObject({ timeout: 50 });
      await time.advanceAsync(50);
      await settled;
    });

    it('addConcurrencyLimiter(permits) admits that many calls at once and queues none', async () => {
      const pipeline = new ResiliencePipelineBuilder().addConcurrencyLimiter(2).build();
      expect(pipeline.describe()).toEqual([{ type: 'concurrency-limiter', name: undefined }]);
      const gates: (() => void)[] = [];
      const running = [1, 2].map(() => pipeline.execute(() => new Promise<void>((r) => gates.push(r))));
      await expect(pipeline.execute(() => 'third')).rejects.toBeInstanceOf(RateLimiterRejectedError);
      for (const open of gates) open();
      await Promise.all(running);
      await expect(pipeline.execute(() => 'after')).resolves.toBe('after');
    });

    it('addConcurrencyLimiter(permits, queue) queues up to queue calls', async () => {
      const pipeline = new ResiliencePipelineBuilder().addConcurrencyLimiter(1, 1).build();
      let open: () => void = () => undefined;
      const first = pipeline.execute(() => new Promise<string>((r) => (open = () => r('first'))));
      const queued = pipeline.execute(() => 'queued');
      const rejected = await pipeline.execute(() => 'third').catch((e: unknown) => e);
      expect(isRateLimiterRejectedError(rejected)).toBe(true);
      open();
      await expect(Promise.all([first, queued])).resolves.toEqual(['first', 'queued']);
    });

    it('addConcurrencyLimiter(options) takes a name and a rejection handler', async () => {
      let rejections = 0;
      const pipeline = new ResiliencePipelineBuilder()
        .addConcurrencyLimiter({ permitLimit: 1, name: 'db', onRejected: () => void rejections++ })
        .build();
      expect(pipeline.describe()).toEqual([{ type: 'concurrency-limiter', name: 'db' }]);
      let open: () => void = () => undefined;
      const first = pipeline.execute(() => new Promise<void>((r) => (open = r)));
      await expect(pipeline.execute(() => 'second')).rejects.toBeInstanceOf(RateLimiterRejectedError);
      expect(rejections).toBe(1);
      open();
      await first;
    });
  });

  it('each add… method adds its strategy, in order; those with defaults take no options', () => {
    const pipeline = new ResiliencePipelineBuilder()
      .addFallback({ fallbackValue: 0 })
      .addRateLimiter()
      .addHedging()
      .addRetry()
      .addCircuitBreaker()
      .addTimeout(1_000)
      .addChaosLatency({ latency: 1, injectionRate: 0 })
      .addChaosFault({ fault: new Error('x'), injectionRate: 0 })
      .addChaosOutcome({ outcome: { ok: true, value: 1 }, injectionRate: 0 })
      .addChaosBehavior({ behavior: () => undefined, injectionRate: 0 })
      .build();
    expect(pipeline.describe().map((d) => d.type)).toEqual([
      'fallback',
      'rate-limiter',
      'hedging',
      'retry',
      'circuit-breaker',
      'timeout',
      'chaos-latency',
      'chaos-fault',
      'chaos-outcome',
      'chaos-behavior',
    ]);
  });

  it('takes a definition without a validate function', async () => {
    const pipeline = new ResiliencePipelineBuilder()
      .add({ type: 'bare', events: [], create: () => ({ execute: (next, context) => next(context) }) }, {})
      .build();
    await expect(pipeline.execute(() => 'through')).resolves.toBe('through');
  });

  it('builtInStrategies make the registrations of the add… methods', () => {
    const made = {
      retry: builtInStrategies.retry({}),
      timeout: builtInStrategies.timeout({ timeout: 1 }),
      fallback: builtInStrategies.fallback({ fallbackValue: 1 }),
      rateLimiter: builtInStrategies.rateLimiter({}),
      hedging: builtInStrategies.hedging({}),
      chaosFault: builtInStrategies.chaosFault({ fault: new Error('x') }),
      chaosLatency: builtInStrategies.chaosLatency({ latency: 1 }),
      chaosOutcome: builtInStrategies.chaosOutcome({ outcome: { ok: true, value: 1 } }),
      chaosBehavior: builtInStrategies.chaosBehavior({ behavior: () => undefined }),
      circuitBreaker: builtInStrategies.circuitBreaker({}),
    };
    expect(Object.fromEntries(Object.entries(made).map(([k, r]) => [k, r.type]))).toEqual({
      retry: 'retry',
      timeout: 'timeout',
      fallback: 'fallback',
      rateLimiter: 'rate-limiter',
      hedging: 'hedging',
      chaosFault: 'chaos-fault',
      chaosLatency: 'chaos-latency',
      chaosOutcome: 'chaos-outcome',
      chaosBehavior: 'chaos-behavior',
      circuitBreaker: 'circuit-breaker',
    });
    const builder = new ResiliencePipelineBuilder();
    for (const registration of Object.values(made)) builder.addStrategy(registration);
    expect(
      builder
        .build()
        .describe()
        .map((d) => d.type),
    ).toEqual(Object.values(made).map((r) => r.type));
  });
});
