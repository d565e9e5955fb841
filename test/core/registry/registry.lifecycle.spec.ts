import { describe, expect, it, jest } from '@jest/globals';
import {
  CircuitBreakerStateProvider,
  ConcurrencyLimiter,
  IsolatedCircuitError,
  OptionsValidator,
  RateLimiterRejectedError,
  ResiliencePipelineBuilder,
  ResiliencePipelineRegistry,
  ResilienceValidationError,
  UnknownPipelineError,
  type ConfigurePipeline,
  type RateLimiter,
  type ValidationIssue,
} from '../../../src/core.entry.js';
import { FakeTimeProvider } from '../../../src/testing/index.js';
import { deferred, isPending } from '../../utils/flaky.js';

const fail = (): Promise<never> => Promise.reject(new Error('down'));
const ok = (): Promise<string> => Promise.resolve('ok');

function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

const issuesOf = (error: unknown): Pick<ValidationIssue, 'path' | 'value' | 'rule'>[] => {
  expect(error).toBeInstanceOf(ResilienceValidationError);
  return (error as ResilienceValidationError).issues.map(({ path, value, rule }) => ({ path, value, rule }));
};

describe('registering pipelines as data', () => {
  it('lists the names sorted, and registers nothing when one pipeline is invalid', () => {
    const registry = new ResiliencePipelineRegistry({
      pipelines: { zeta: { retry: { maxRetryAttempts: 1 } }, alpha: { timeout: 100 } },
    });
    expect(registry.pipelineNames).toEqual(['alpha', 'zeta']);
    const error = thrown(() =>
      registry.addPipelines({
        good: { timeout: 100 },
        bad: { retry: { maxRetryAttempts: -1 } },
        worse: { timeout: { timeout: -5 } },
      }),
    );
    expect((error as Error).message).toMatch(/^Invalid resilience configuration/);
    expect(issuesOf(error).map((i) => i.path)).toEqual([
      'pipelines.bad.retry.maxRetryAttempts',
      'pipelines.worse.timeout.timeout',
    ]);
    expect(registry.pipelineNames).toEqual(['alpha', 'zeta']);
    expect(registry.declaredPipelineNames).toEqual(['alpha', 'zeta']);
    expect(registry.isInvalidPipeline('bad')).toBe(false);
    expect(registry.tryGetPipeline('good')).toBeUndefined();
  });

  it('refuses a name that is already registered, with path, value and rule', () => {
    const registry = new ResiliencePipelineRegistry({ pipelines: { orders: { timeout: 100 } } });
    const error = thrown(() => registry.addPipelines({ orders: { timeout: 200 } }));
    expect(issuesOf(error)).toEqual([{ path: 'pipelines.orders', value: '(exists)', rule: 'is already registered' }]);
    expect(registry.getPipelineConfig('orders')).toEqual({ timeout: 100 });
  });

  it('reports a pipelines value that is not an object, thrown or collected', () => {
    const registry = new ResiliencePipelineRegistry();
    const expected = [{ path: 'pipelines', value: 42, rule: 'must be an object of named pipelines' }];
    const error = thrown(() => registry.addPipelines(42 as never));
    expect((error as Error).message).toMatch(/^Invalid resilience configuration/);
    expect(issuesOf(error)).toEqual(expected);
    const collect = new OptionsValidator('');
    registry.addPipelines('nope' as never, collect);
    expect(collect.problems).toEqual([{ ...expected[0], value: 'nope' }]);
    expect(issuesOf(thrown(() => registry.addPipelines(null as never)))).toEqual([{ ...expected[0], value: null }]);
    expect(registry.pipelineNames).toEqual([]);
  });

  it('with a collector, registers the valid pipelines and answers an invalid one with its own problems', async () => {
    const registry = new ResiliencePipelineRegistry({ timeProvider: new FakeTimeProvider() });
    const collect = new OptionsValidator('');
    registry.addPipelines(
      {
        good: { retry: { maxRetryAttempts: 1, delay: 0 } },
        bad: { retry: { maxRetryAttempts: -1 } },
        other: { timeout: { timeout: -5 } },
      },
      collect,
    );
    expect(collect.problems.map((p) => p.path)).toEqual([
      'pipelines.bad.retry.maxRetryAttempts',
      'pipelines.other.timeout.timeout',
    ]);
    expect(registry.pipelineNames).toEqual(['good']);
    expect(registry.declaredPipelineNames).toEqual(['bad', 'good', 'other']);
    expect(registry.isInvalidPipeline('bad')).toBe(true);
    expect(registry.isInvalidPipeline('good')).toBe(false);
    const error = thrown(() => registry.getPipeline('bad'));
    expect((error as Error).message).toMatch(/^Invalid configuration for pipeline "bad"/);
    expect(issuesOf(error).map((i) => i.path)).toEqual(['pipelines.bad.retry.maxRetryAttempts']);
    expect(() => registry.tryGetPipeline('other')).toThrow(ResilienceValidationError);
    let calls = 0;
    await expect(registry.getPipeline('good').execute(() => (calls++ === 0 ? fail() : ok()))).resolves.toBe('ok');
    // The name of an invalid pipeline stays taken.
    expect(issuesOf(thrown(() => registry.addPipelines({ bad: { timeout: 100 } }))).map((i) => i.rule)).toEqual([
      'is already registered',
    ]);
    await registry.dispose();
  });

  it('with a collector, a name given twice leaves the pipeline registered first as it was', async () => {
    const registry = new ResiliencePipelineRegistry({ pipelines: { orders: { timeout: 100 } } });
    const collect = new OptionsValidator('');
    registry.addPipelines({ orders: { timeout: 200 } }, collect);
    expect(collect.problems.map((p) => p.rule)).toEqual(['is already registered']);
    expect(registry.isInvalidPipeline('orders')).toBe(false);
    expect(registry.getPipelineConfig('orders')).toEqual({ timeout: 100 });
    await expect(registry.getPipeline('orders').execute(ok)).resolves.toBe('ok');
  });

  it('lets an error that is not about options through, such as a state provider given to two breakers', () => {
    const stateProvider = new CircuitBreakerStateProvider();
    expect(
      () =>
        new ResiliencePipelineRegistry({
          pipelines: { a: { circuitBreaker: { stateProvider } }, b: { circuitBreaker: { stateProvider } } },
        }),
    ).toThrow('This CircuitBreakerStateProvider is already used by another circuit breaker.');
  });

  it('refuses a limit marked distributed without a distributed store, at its path, with the other problems', () => {
    const limit = { kind: 'token-bucket', tokenLimit: 5, replenishmentPeriod: 1_000, distributed: true } as const;
    let error: unknown;
    try {
      new ResiliencePipelineRegistry({
        pipelines: {
          p: { rateLimiter: limit, retry: { maxRetryAttempts: -1 } },
          q: {
            strategies: [
              { type: 'rateLimiter', kind: 'sliding-window', permitLimit: 2, window: 1_000, distributed: true },
            ],
          },
        },
      });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ResilienceValidationError);
    const rule = 'needs a distributed store to share the limit in (the module option store: { redis })';
    expect((error as ResilienceValidationError).issues).toEqual([
      expect.objectContaining({ path: 'pipelines.p.rateLimiter.distributed', value: true, rule }),
      expect.objectContaining({ path: 'pipelines.p.retry.maxRetryAttempts', value: -1 }),
      expect.objectContaining({ path: 'pipelines.q.strategies[0].distributed', value: true, rule }),
    ]);
    const withStore = new ResiliencePipelineRegistry({
      distributedLimiter: () => new ConcurrencyLimiter({ permitLimit: 1 }),
      pipelines: { p: { rateLimiter: limit } },
    });
    expect(withStore.getPipeline('p')).toBeDefined();
  });

  it('gives its pipelines its telemetry listeners, random source and names', async () => {
    const sources: unknown[] = [];
    const registry = new ResiliencePipelineRegistry({
      random: () => 0,
      telemetryListeners: [{ write: (e) => void (e.eventName === 'OnChaosInjected' && sources.push(e.source)) }],
      pipelines: { p: { chaosFault: { injectionRate: 0.5, message: 'injected' } } },
    });
    await expect(registry.getPipeline('p', 'eu').execute(ok)).rejects.toThrow('injected');
    expect(sources).toEqual([
      expect.objectContaining({ pipelineName: 'p', pipelineInstanceName: 'eu', strategyType: 'chaos-fault' }),
    ]);
  });

  it('a null pipelines option (an empty YAML key) registers nothing and throws nothing', () => {
    expect(new ResiliencePipelineRegistry({ pipelines: null as never }).pipelineNames).toEqual([]);
  });

  it('knows a predicate registered later by name, in the pipelines added after it', async () => {
    const registry = new ResiliencePipelineRegistry();
    const teapots = jest.fn(() => false);
    expect(registry.registerPredicate('never', teapots)).toBe(registry);
    registry.addPipelines({ orders: { retry: { maxRetryAttempts: 1, delay: 0, shouldHandle: 'never' } } });
    await expect(registry.getPipeline('orders').execute(fail)).rejects.toThrow('down');
    expect(teapots).toHaveBeenCalledTimes(1); // asked once, said no: no retry
    // The configuration shown keeps the predicate's name.
    expect(registry.getPipelineConfig('orders')).toEqual({
      retry: { maxRetryAttempts: 1, delay: 0, shouldHandle: 'never' },
    });
    expect(registry.predicates.names).toContain('never');
  });

  it('knows the predicates given to its constructor by name', async () => {
    const registry = new ResiliencePipelineRegistry({
      predicates: { 'only-teapots': ({ outcome }) => !outcome.ok && (outcome.error as Error).message === 'teapot' },
      pipelines: { orders: { retry: { maxRetryAttempts: 1, delay: 0, shouldHandle: 'only-teapots' } } },
    });
    let calls = 0;
    const teapot = () => {
      calls++;
      return Promise.reject(new Error('teapot'));
    };
    await expect(registry.getPipeline('orders').execute(teapot)).rejects.toThrow('teapot');
    expect(calls).toBe(2);
    calls = 0;
    await expect(registry.getPipeline('orders').execute(() => (calls++, fail()))).rejects.toThrow('down');
    expect(calls).toBe(1);
    expect(registry.predicates.names).toContain('only-teapots');
  });
});

describe('pipelines and their instances', () => {
  it('hands out one instance per name and key', () => {
    const registry = new ResiliencePipelineRegistry({ pipelines: { orders: { timeout: 100 } } });
    const plain = registry.getPipeline('orders');
    expect(registry.getPipeline('orders')).toBe(plain);
    expect(registry.tryGetPipeline('orders')).toBe(plain);
    const eu = registry.getPipeline('orders', 'eu');
    expect(eu).not.toBe(plain);
    expect(registry.getPipeline('orders', 'eu')).toBe(eu);
    expect(registry.getPipeline('orders', 'us')).not.toBe(eu);
  });

  it('answers an unknown name with UnknownPipelineError naming the known ones (or undefined from tryGetPipeline)', () => {
    const registry = new ResiliencePipelineRegistry({ pipelines: { b: { timeout: 1 }, a: { timeout: 1 } } });
    const error = thrown(() => registry.getPipeline('c'));
    expect(error).toBeInstanceOf(UnknownPipelineError);
    expect(error).toMatchObject({ pipelineName: 'c', knownNames: ['a', 'b'] });
    expect(registry.tryGetPipeline('c')).toBeUndefined();
  });

  it('takes the key "" for the pipeline without a key: in its telemetry and its circuit', async () => {
    const instanceNames: unknown[] = [];
    const registry = new ResiliencePipelineRegistry({
      random: () => 0,
      telemetryListeners: [
        { write: (e) => void (e.eventName === 'OnChaosInjected' && instanceNames.push(e.source.pipelineInstanceName)) },
      ],
      pipelines: {
        p: { circuitBreaker: { kind: 'consecutive' }, chaosFault: { injectionRate: 0.5, message: 'injected' } },
      },
    });
    const pipeline = registry.getPipeline('p', '');
    expect(registry.getPipeline('p')).toBe(pipeline);
    await expect(pipeline.execute(ok)).rejects.toThrow('injected');
    expect(instanceNames).toEqual([undefined]);
    expect(await registry.circuitState('p', '')).toMatchObject({ instanceKey: undefined, failures: 1 });
    expect(await registry.isolateCircuit('p', '')).toBe(1);
    await expect(pipeline.execute(ok)).rejects.toBeInstanceOf(IsolatedCircuitError);
    expect(await registry.closeCircuit('p', '')).toBe(1);
    await expect(registry.getPipeline('p').execute(ok)).rejects.toThrow('injected');
  });

  it('has no configuration to show for a name it does not know', () => {
    const registry = new ResiliencePipelineRegistry({ pipelines: { orders: { timeout: 100 } } });
    expect(registry.getPipelineConfig('unknown')).toBeUndefined();
  });

  it('hands out pipelines that work as a strategy of another pipeline and follow reloads there', async () => {
    const registry = new ResiliencePipelineRegistry({
      pipelines: { orders: { retry: { maxRetryAttempts: 1, delay: 0 } } },
    });
    const orders = registry.getPipeline('orders');
    const outer = new ResiliencePipelineBuilder()
      .addTimeout(1_000)
      .addStrategy({ type: 'orders', options: {}, create: () => orders.asStrategy() })
      .build();
    let calls = 0;
    await expect(outer.execute(() => (calls++, fail()))).rejects.toThrow('down');
    expect(calls).toBe(2);
    await registry.reload('orders', { retry: { maxRetryAttempts: 3, delay: 0 } });
    calls = 0;
    await expect(outer.execute(() => (calls++, fail()))).rejects.toThrow('down');
    expect(calls).toBe(4);
    await outer.dispose();
  });

  it('getOrAddPipeline configures a pipeline once per key, with its name and key', async () => {
    const registry = new ResiliencePipelineRegistry({ timeProvider: new FakeTimeProvider() });
    const configure = jest.fn<ConfigurePipeline<unknown>>((builder) => {
      builder.addRetry({ maxRetryAttempts: 2, delay: 0 });
    });
    const first = registry.getOrAddPipeline('coded', configure);
    expect(registry.getOrAddPipeline('coded', configure)).toBe(first);
    expect(registry.getPipeline('coded')).toBe(first);
    expect(configure).toHaveBeenCalledTimes(1);
    expect(configure.mock.calls[0][1]).toEqual({ name: 'coded', key: undefined });
    const eu = registry.getOrAddPipeline('coded', configure, 'eu');
    expect(eu).not.toBe(first);
    expect(configure).toHaveBeenCalledTimes(2);
    expect(configure.mock.calls[1][1]).toEqual({ name: 'coded', key: 'eu' });
    expect(registry.getPipeline('coded', 'us')).not.toBe(eu); // configured again for the new key
    expect(configure.mock.calls[2][1]).toEqual({ name: 'coded', key: 'us' });
    expect(registry.pipelineNames).toEqual(['coded']);
    expect(registry.getPipelineConfig('coded')).toBeUndefined();
    let calls = 0;
    await expect(first.execute(() => (++calls < 3 ? fail() : ok()))).resolves.toBe('ok');
    await registry.dispose();
  });

  it('getOrAddPipeline registers the first instance under the key it was asked for', () => {
    const registry = new ResiliencePipelineRegistry();
    const keys: (string | undefined)[] = [];
    const eu = registry.getOrAddPipeline('coded', (b, { key }) => void (keys.push(key), b.addTimeout(10)), 'eu');
    expect(registry.getPipeline('coded', 'eu')).toBe(eu);
    expect(registry.getPipeline('coded')).not.toBe(eu);
    expect(keys).toEqual(['eu', undefined]);
  });

  it('getOrAddPipeline registers nothing when the configured pipeline is invalid', () => {
    const registry = new ResiliencePipelineRegistry();
    expect(() => registry.getOrAddPipeline('coded', (b) => b.addTimeout(-1))).toThrow(ResilienceValidationError);
    expect(registry.pipelineNames).toEqual([]);
    const pipeline = registry.getOrAddPipeline('coded', (b) => b.addTimeout(10));
    expect(registry.getPipeline('coded')).toBe(pipeline);
  });
});

describe('reload', () => {
  function ordersRegistry(time: FakeTimeProvider): ResiliencePipelineRegistry {
    return new ResiliencePipelineRegistry({
      timeProvider: time,
      pipelines: {
        orders: { circuitBreaker: { kind: 'consecutive', failureThreshold: 2, breakDuration: 10_000 } },
        idle: { timeout: 100 },
      },
    });
  }

  it('switches every instance handed out to the new options, keeping circuit state per key', async () => {
    const time = new FakeTimeProvider();
    const registry = ordersRegistry(time);
    const plain = registry.getPipeline('orders');
    const eu = registry.getPipeline('orders', 'eu');
    await plain.executeOutcome(fail);
    await plain.executeOutcome(fail); // opens the circuit without a key
    await eu.executeOutcome(fail); // one failure on "eu"
    const us = registry.getPipeline('orders', 'us');
    await registry.reload('orders', {
      retry: { maxRetryAttempts: 1, delay: '0ms' },
      circuitBreaker: { kind: 'consecutive', failureThreshold: 2, breakDuration: '10s' },
    });
    expect(registry.getPipelineConfig('orders')).toEqual({
      retry: { maxRetryAttempts: 1, delay: 0 },
      circuitBreaker: { kind: 'consecutive', failureThreshold: 2, breakDuration: 10_000 },
    });
    expect(registry.getPipeline('orders')).toBe(plain);
    expect(registry.getPipeline('orders', 'eu')).toBe(eu);
    expect((await plain.executeOutcome(ok)).ok).toBe(false); // still open
    expect((await registry.circuitState('orders'))!.state).toBe('open');
    expect((await registry.circuitState('orders', 'eu'))!.failures).toBe(1);
    let calls = 0;
    await expect(us.execute(() => (calls++ === 0 ? fail() : ok()))).resolves.toBe('ok'); // the new retry
    expect(registry.getPipeline('orders', 'us')).toBe(us);
  });

  it('rejects an invalid configuration with its problems and changes nothing', async () => {
    const time = new FakeTimeProvider();
    const registry = ordersRegistry(time);
    const orders = registry.getPipeline('orders', 'eu');
    const error = await rejection(registry.reload('orders', { timeout: { timeout: -1 } }));
    expect((error as Error).message).toMatch(/^Invalid configuration for pipeline "orders"/);
    expect(issuesOf(error).map((i) => i.path)).toEqual(['pipelines.orders.timeout.timeout']);
    expect(registry.getPipelineConfig('orders')).toEqual({
      circuitBreaker: { kind: 'consecutive', failureThreshold: 2, breakDuration: 10_000 },
    });
    expect(orders.describe().map((d) => d.type)).toEqual(['circuit-breaker']);
    // A pipeline nobody asked for yet is validated all the same.
    expect(issuesOf(await rejection(registry.reload('idle', { retry: { delay: 'soon' } }))).map((i) => i.path)).toEqual(
      ['pipelines.idle.retry.delay'],
    );
    expect(issuesOf(await rejection(registry.reload('idle', { bogus: {} } as never))).map((i) => i.path)).toEqual([
      'pipelines.idle.bogus',
    ]);
    expect(registry.getPipelineConfig('idle')).toEqual({ timeout: 100 });
  });

  it('answers an unknown name with UnknownPipelineError', async () => {
    const registry = ordersRegistry(new FakeTimeProvider());
    expect(await rejection(registry.reload('nope', { timeout: 1 }))).toBeInstanceOf(UnknownPipelineError);
  });

  it('turns a pipeline added by code into configuration, for new keys too', async () => {
    const registry = new ResiliencePipelineRegistry({ timeProvider: new FakeTimeProvider() });
    const coded = registry.getOrAddPipeline('coded', (b) => b.addTimeout(1_000));
    await registry.reload('coded', { retry: { maxRetryAttempts: 3, delay: 0 } });
    expect(coded.describe().map((d) => d.type)).toEqual(['retry']);
    expect(
      registry
        .getPipeline('coded', 'eu')
        .describe()
        .map((d) => d.type),
    ).toEqual(['retry']);
  });

  it('disposes the pipelines it replaced: their own limiters reject the callers still queued', async () => {
    const registry = new ResiliencePipelineRegistry({ timeProvider: new FakeTimeProvider() });
    const limiter = new ConcurrencyLimiter({ permitLimit: 1, queueLimit: 1 });
    const disposeSpy = jest.spyOn(limiter, 'dispose');
    const pipeline = registry.getOrAddPipeline('coded', (b) =>
      b.addRateLimiter({ kind: 'concurrency', permitLimit: 1, queueLimit: 1 }),
    );
    const gate = deferred<string>();
    const running = pipeline.execute(() => gate.promise);
    const queued = pipeline.execute(ok);
    await registry.reload('coded', { timeout: 100 });
    await expect(queued).rejects.toThrow('The concurrency limiter was disposed.');
    gate.resolve('done');
    await expect(running).resolves.toBe('done');
    expect(disposeSpy).not.toHaveBeenCalled(); // a limiter of one's own is not the registry's to dispose
  });
});

describe('shared limiters and circuit controls', () => {
  it('shares one limiter per pipeline name, key and section', () => {
    const registry = new ResiliencePipelineRegistry();
    const options = { kind: 'concurrency' as const, permitLimit: 1 };
    const a = registry.sharedLimiter('orders', undefined, 'concurrencyLimiter', options);
    expect(registry.sharedLimiter('orders', undefined, 'concurrencyLimiter', options)).toBe(a);
    expect(registry.sharedLimiter('orders', 'eu', 'concurrencyLimiter', options)).not.toBe(a);
    expect(registry.sharedLimiter('orders', undefined, 'rateLimiter', options)).not.toBe(a);
    expect(registry.sharedLimiter('catalog', undefined, 'concurrencyLimiter', options)).not.toBe(a);
    const eu = registry.sharedLimiter('orders', 'eu', 'concurrencyLimiter', options);
    expect(registry.sharedLimiter('orders', 'us', 'concurrencyLimiter', options)).not.toBe(eu);
    // A name and a key never run together into another pipeline's name.
    expect(registry.sharedLimiter('orderseu', undefined, 'concurrencyLimiter', options)).not.toBe(eu);
    expect(registry.circuitControl('orders')).toBe(registry.circuitControl('orders'));
    expect(registry.circuitControl('orders')).not.toBe(registry.circuitControl('catalog'));
  });

  it('a limit section shares its permits between every instance for a key and every method naming it', async () => {
    const registry = new ResiliencePipelineRegistry({ pipelines: { search: { concurrencyLimiter: 1 } } });
    const gate = deferred<string>();
    const running = registry.getPipeline('search').execute(() => gate.promise);
    const issues = new OptionsValidator('Search.find');
    const builder = registry.createBuilder<unknown>('Search.find');
    registry.applyConfig(builder, { concurrencyLimiter: 1 }, issues, { sharedWith: 'search' });
    await expect(builder.build().execute(ok)).rejects.toBeInstanceOf(RateLimiterRejectedError);
    await expect(registry.getPipeline('search', 'other-key').execute(ok)).resolves.toBe('ok');
    gate.resolve('done');
    await running;
  });

  it('takes the key "" for the pipeline without a key', () => {
    const made: string[] = [];
    const registry = new ResiliencePipelineRegistry({
      distributedLimiter: (id) => (made.push(id), new ConcurrencyLimiter({ permitLimit: 1 })),
    });
    const options = { kind: 'token-bucket' as const, tokenLimit: 5, replenishmentPeriod: 1_000, distributed: true };
    const first = registry.sharedLimiter('orders', '', 'rateLimiter', options);
    expect(registry.sharedLimiter('orders', undefined, 'rateLimiter', options)).toBe(first);
    expect(made).toEqual(['orders:rateLimiter']);
    expect(registry.limiterStatistics()).toEqual([
      expect.objectContaining({ pipelineName: 'orders', instanceKey: undefined, section: 'rateLimiter' }),
    ]);
  });

  it('gives configuration applied without a pipeline to share with limits of its own', async () => {
    const registry = new ResiliencePipelineRegistry();
    const build = (name: string) => {
      const builder = registry.createBuilder<unknown>(name);
      registry.applyConfig(builder, { concurrencyLimiter: 1 }, new OptionsValidator(name));
      return builder.build();
    };
    const first = build('Orders.find');
    const second = build('Orders.list');
    const gate = deferred<string>();
    const running = first.execute(() => gate.promise);
    await expect(second.execute(ok)).resolves.toBe('ok');
    await expect(first.execute(ok)).rejects.toBeInstanceOf(RateLimiterRejectedError);
    gate.resolve('done');
    await running;
  });

  it('makes a distributed limit through the configured factory, named by pipeline, key and section', () => {
    const made: [string, unknown][] = [];
    const fakes: RateLimiter[] = [];
    const registry = new ResiliencePipelineRegistry({
      distributedLimiter: (id, options) => {
        made.push([id, options]);
        const fake: RateLimiter = {
          acquire: () => ({ acquired: true, release: () => undefined }),
          isIdle: () => true,
          dispose: () => undefined,
        };
        fakes.push(fake);
        return fake;
      },
    });
    const options = { kind: 'token-bucket' as const, tokenLimit: 5, replenishmentPeriod: 1_000, distributed: true };
    expect(registry.sharedLimiter('orders', undefined, 'rateLimiter', options)).toBe(fakes[0]);
    expect(registry.sharedLimiter('orders', 'eu', 'rateLimiter', options)).toBe(fakes[1]);
    expect(registry.sharedLimiter('orders', 'eu', 'rateLimiter', options)).toBe(fakes[1]);
    expect(made).toEqual([
      ['orders:rateLimiter', options],
      ['orders:eu:rateLimiter', options],
    ]);
    expect(registry.limiterStatistics()).toEqual([
      {
        pipelineName: 'orders',
        instanceKey: undefined,
        section: 'rateLimiter',
        kind: 'token-bucket',
        permitLimit: 5,
        permitsInUse: undefined,
        queueLength: 0,
        queueLimit: undefined,
        partitions: undefined,
        distributed: true,
      },
      expect.objectContaining({ pipelineName: 'orders', instanceKey: 'eu', distributed: true }),
    ]);
  });
});

describe('dispose', () => {
  it('disposes every pipeline and shared limiter once: queued callers are rejected', async () => {
    const registry = new ResiliencePipelineRegistry({
      pipelines: { search: { concurrencyLimiter: { permitLimit: 1, queueLimit: 1 } } },
    });
    const search = registry.getPipeline('search');
    const gate = deferred<string>();
    const running = search.execute(() => gate.promise);
    const queued = search.execute(ok);
    await registry.dispose();
    await expect(queued).rejects.toThrow('The concurrency limiter was disposed.');
    await registry.dispose(); // a second dispose is a no-op
    gate.resolve('done');
    await expect(running).resolves.toBe('done');
    expect(registry.pipelineNames).toEqual([]);
    expect(registry.limiterStatistics()).toEqual([]);
    expect(await registry.circuits()).toEqual([]);
  });

  it('disposes the strategies of pipelines added by code, for every key', async () => {
    const registry = new ResiliencePipelineRegistry();
    const configure: ConfigurePipeline<unknown> = (b) =>
      b.addRateLimiter({ kind: 'concurrency', permitLimit: 1, queueLimit: 1 });
    const gate = deferred<string>();
    const queued = [undefined, 'eu'].map((key) => {
      const pipeline = registry.getOrAddPipeline('coded', configure, key);
      void pipeline.execute(() => gate.promise);
      return pipeline.execute(ok);
    });
    await registry.dispose();
    for (const call of queued) await expect(call).rejects.toThrow('The concurrency limiter was disposed.');
    gate.resolve('done');
  });

  it('a pipeline handed out, disposed by itself, releases what its strategies hold', async () => {
    const registry = new ResiliencePipelineRegistry();
    const pipeline = registry.getOrAddPipeline('coded', (b) =>
      b.addRateLimiter({ kind: 'concurrency', permitLimit: 1, queueLimit: 1 }),
    );
    const gate = deferred<string>();
    const running = pipeline.execute(() => gate.promise);
    const queued = pipeline.execute(ok);
    await pipeline.dispose();
    await expect(queued).rejects.toThrow('The concurrency limiter was disposed.');
    gate.resolve('done');
    await expect(running).resolves.toBe('done');
  });

  it('a second dispose settles when the first is done, and disposes nothing twice', async () => {
    const limiterDisposed = jest.fn();
    const registry = new ResiliencePipelineRegistry({
      distributedLimiter: () => ({
        acquire: () => ({ acquired: true, release: () => undefined }),
        isIdle: () => true,
        dispose: limiterDisposed,
      }),
    });
    const strategyDisposed = deferred<void>();
    registry.getOrAddPipeline('slow', (b) =>
      b.addStrategy({
        type: 'slow-to-dispose',
        options: {},
        create: () => ({ execute: (next, context) => next(context), dispose: () => strategyDisposed.promise }),
      }),
    );
    const options = { kind: 'token-bucket' as const, tokenLimit: 5, replenishmentPeriod: 1_000, distributed: true };
    registry.sharedLimiter('slow', undefined, 'rateLimiter', options);
    const first = registry.dispose();
    const second = registry.dispose();
    expect(await isPending(second)).toBe(true);
    strategyDisposed.resolve();
    await second;
    await first;
    expect(limiterDisposed).toHaveBeenCalledTimes(1);
    await registry.dispose();
    expect(limiterDisposed).toHaveBeenCalledTimes(1);
  });

  it('cannot be used afterwards', async () => {
    const registry = new ResiliencePipelineRegistry({ pipelines: { orders: { timeout: 100 } } });
    await registry.dispose();
    const message = 'The resilience pipeline registry has been disposed.';
    expect(() => registry.getPipeline('orders')).toThrow(message);
    expect(() => registry.tryGetPipeline('orders')).toThrow(message);
    expect(() => registry.getOrAddPipeline('coded', (b) => b.addTimeout(10))).toThrow(message);
    expect(registry.pipelineNames).toEqual([]);
  });

  it('stops tracking pipelines built from createBuilder', async () => {
    const registry = new ResiliencePipelineRegistry();
    await registry.dispose();
    const pipeline = registry.createBuilder('Orders.find').addCircuitBreaker({ kind: 'consecutive' }).build();
    await pipeline.executeOutcome(fail);
    expect(await registry.circuits()).toEqual([]);
  });
});

describe('isolating circuits by hand', () => {
  it('with a key drives that instance only; without, every instance and those built later', async () => {
    const registry = new ResiliencePipelineRegistry({
      timeProvider: new FakeTimeProvider(),
      pipelines: { orders: { circuitBreaker: { kind: 'consecutive', failureThreshold: 5 } } },
    });
    const eu = registry.getPipeline('orders', 'eu');
    const us = registry.getPipeline('orders', 'us');
    expect(await registry.isolateCircuit('orders', 'eu')).toBe(1);
    await expect(eu.execute(ok)).rejects.toBeInstanceOf(IsolatedCircuitError);
    await expect(us.execute(ok)).resolves.toBe('ok');
    expect(await registry.closeCircuit('orders', 'eu')).toBe(1);
    await expect(eu.execute(ok)).resolves.toBe('ok');

    expect(await registry.isolateCircuit('orders')).toBe(2);
    await expect(us.execute(ok)).rejects.toBeInstanceOf(IsolatedCircuitError);
    await expect(registry.getPipeline('orders', 'asia').execute(ok)).rejects.toBeInstanceOf(IsolatedCircuitError);
    expect(await registry.closeCircuit('orders')).toBe(3);
    await expect(registry.getPipeline('orders', 'asia').execute(ok)).resolves.toBe('ok');
    await expect(registry.getPipeline('orders', 'africa').execute(ok)).resolves.toBe('ok');
    expect(await registry.isolateCircuit('orders', 'nowhere')).toBe(0);
    expect(await registry.isolateCircuit('unknown')).toBe(0);
    await registry.dispose();
  });

  it('isolating a name that is not registered drives no circuit control', async () => {
    const registry = new ResiliencePipelineRegistry({ pipelines: { orders: { timeout: 100 } } });
    expect(await registry.isolateCircuit('ghost')).toBe(0);
    const builder = registry.createBuilder<unknown>('Ghost.method');
    registry.applyConfig(builder, { circuitBreaker: { kind: 'consecutive' } }, new OptionsValidator(''), {
      sharedWith: 'ghost',
    });
    await expect(builder.build().execute(ok)).resolves.toBe('ok');
  });

  it('isolating a decorated method by name does not isolate a registered pipeline of another name', async () => {
    const registry = new ResiliencePipelineRegistry({
      pipelines: { orders: { circuitBreaker: { kind: 'consecutive' } } },
    });
    const method = registry.createBuilder('Orders.find').addCircuitBreaker({ kind: 'consecutive' }).build();
    expect(await registry.isolateCircuit('Orders.find')).toBe(1);
    await expect(method.execute(ok)).rejects.toBeInstanceOf(IsolatedCircuitError);
    await expect(registry.getPipeline('orders').execute(ok)).resolves.toBe('ok');
  });
});
