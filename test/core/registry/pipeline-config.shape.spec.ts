import { describe, expect, it } from '@jest/globals';
import {
  BUILT_IN_PREDICATES,
  OptionsValidator,
  PredicateRegistry,
  ResiliencePipelineRegistry,
  ResilienceValidationError,
  STRATEGY_CATALOG,
  TimeoutRejectedError,
  type PipelineConfig,
} from '../../../src/core.entry.js';
import { FakeTimeProvider } from '../../../src/testing/index.js';

function problems(config: unknown): { path: string; value?: unknown; rule: string }[] {
  try {
    new ResiliencePipelineRegistry({ pipelines: { p: config as PipelineConfig } });
  } catch (error) {
    expect(error).toBeInstanceOf(ResilienceValidationError);
    return (error as ResilienceValidationError).issues.map(({ path, value, rule }) => ({ path, value, rule }));
  }
  return [];
}

function types(config: unknown): string[] {
  const registry = new ResiliencePipelineRegistry({ pipelines: { p: config as PipelineConfig } });
  return registry
    .getPipeline('p')
    .describe()
    .map((d) => (d.name ? `${d.type}:${d.name}` : d.type));
}

describe('the shape of a pipeline configuration', () => {
  it('composes named sections in the fixed order, whatever order they are written in', () => {
    expect(STRATEGY_CATALOG.filter((line) => line.registration).map((line) => line.name)).toEqual([
      'fallback',
      'totalTimeout',
      'rateLimiter',
      'concurrencyLimiter',
      'adaptiveConcurrency',
      'hedging',
      'retry',
      'adaptiveThrottling',
      'circuitBreaker',
      'timeout',
      'chaosLatency',
      'chaosFault',
    ]);
    expect(
      types({
        timeout: 100,
        retry: { name: 'r' },
        concurrencyLimiter: 2,
        totalTimeout: 1_000,
        fallback: { fallbackValue: 0 },
      }),
    ).toEqual(['fallback', 'timeout', 'concurrency-limiter', 'retry:r', 'timeout']);
  });

  it('composes the list form in the order given, with a type per entry', () => {
    expect(
      types({
        strategies: [
          { type: 'timeout', timeout: 100 },
          { type: 'retry', name: 'inner' },
          { type: 'concurrencyLimiter', permitLimit: 1 },
          { type: 'retry', name: 'outer' },
        ],
      }),
    ).toEqual(['timeout', 'retry:inner', 'concurrency-limiter', 'retry:outer']);
  });

  it('reads a number for a section as its main option', async () => {
    const time = new FakeTimeProvider();
    const registry = new ResiliencePipelineRegistry({
      timeProvider: time,
      pipelines: { p: { timeout: 250, concurrencyLimiter: 1 } },
    });
    const call = registry.getPipeline('p').execute(({ signal }) => time.delay(1_000, signal));
    const settled = expect(call).rejects.toMatchObject({ timeout: 250 });
    await expect(registry.getPipeline('p').execute(() => 'second')).rejects.toMatchObject({
      name: 'RateLimiterRejectedError',
    });
    await time.advanceAsync(250);
    await settled;
    await expect(call).rejects.toBeInstanceOf(TimeoutRejectedError);
  });

  it('refuses the list form together with named sections, and keys it does not know', () => {
    expect(problems({ strategies: [], retry: {}, timeout: 10 })).toEqual([
      { path: 'pipelines.p.strategies', value: [], rule: 'cannot be combined with retry, timeout' },
      expect.objectContaining({ path: 'pipelines.p.retry', rule: expect.stringMatching(/^is not a known option/) }),
      expect.objectContaining({ path: 'pipelines.p.timeout', rule: expect.stringMatching(/^is not a known option/) }),
    ]);
    expect(problems({ retyr: {} })).toEqual([
      {
        path: 'pipelines.p.retyr',
        value: {},
        rule: expect.stringMatching(/^is not a known option \(did you mean "retry"\?\)/),
      },
    ]);
    expect(problems({ timeout: 10, stratgies: [] })).toEqual([
      { path: 'pipelines.p.stratgies', value: [], rule: 'is not a known option (did you mean "strategies"?)' },
    ]);
    expect(problems({ strategies: [], extra: 1 })).toEqual([
      expect.objectContaining({ path: 'pipelines.p.extra', value: 1 }),
    ]);
  });

  it('reports a strategies value that is not an array, an entry that is not an object and an unknown type', () => {
    expect(problems({ strategies: { type: 'retry' } })).toEqual([
      { path: 'pipelines.p.strategies', value: { type: 'retry' }, rule: 'must be an array' },
    ]);
    expect(problems({ strategies: [null, 3, { type: 'totalTimeout', timeout: 5 }, { type: 'retry' }] })).toEqual([
      { path: 'pipelines.p.strategies[0]', value: null, rule: 'must be an object' },
      { path: 'pipelines.p.strategies[1]', value: 3, rule: 'must be an object' },
      {
        path: 'pipelines.p.strategies[2].type',
        value: 'totalTimeout',
        rule: 'must be one of "fallback", "rateLimiter", "concurrencyLimiter", "adaptiveConcurrency", "hedging", "retry", "adaptiveThrottling", "circuitBreaker", "timeout", "chaosLatency", "chaosFault"',
      },
    ]);
  });

  it('reports option problems of a listed strategy under its index', () => {
    expect(
      problems({
        strategies: [
          { type: 'timeout', timeout: 5 },
          { type: 'retry', maxRetryAttempts: -1 },
        ],
      }),
    ).toEqual([expect.objectContaining({ path: 'pipelines.p.strategies[1].maxRetryAttempts', value: -1 })]);
  });

  it('reads a number only for a section with a main option, and says what a section must be otherwise', () => {
    expect(problems({ retry: 3 })).toEqual([
      { path: 'pipelines.p.retry', value: 3, rule: 'must be an object of options' },
    ]);
    expect(problems({ timeout: true })).toEqual([
      { path: 'pipelines.p.timeout', value: true, rule: 'must be an object of options, or a number (its timeout)' },
    ]);
    expect(problems({ concurrencyLimiter: 2 })).toEqual([]);
  });

  it.each([
    ['false', false],
    ['true', true],
    ['null', null],
    ['a string', 'abc'],
    ['an array', [{ maxRetryAttempts: 2 }]],
  ])('rejects %s as a section instead of reading it as the defaults', (_, value) => {
    expect(problems({ retry: value, circuitBreaker: value })).toEqual([
      { path: 'pipelines.p.retry', value, rule: 'must be an object of options' },
      { path: 'pipelines.p.circuitBreaker', value, rule: 'must be an object of options' },
    ]);
  });

  it('does not change the section objects it was given', () => {
    const retry = { maxRetryAttempts: 2, delay: 0, shouldHandle: 'all-errors' };
    const registry = new ResiliencePipelineRegistry({ pipelines: { p: { retry } } });
    registry.getPipeline('p');
    expect(retry).toEqual({ maxRetryAttempts: 2, delay: 0, shouldHandle: 'all-errors' });
  });
});

describe('predicates by name', () => {
  it('knows the built-in predicates, sorted', () => {
    const registry = new PredicateRegistry();
    expect(registry.names).toEqual([
      'all-errors',
      'http-failure',
      'http-retryable',
      'http-transient',
      'overload',
      'timeout',
      'transient-network',
    ]);
    expect(Object.keys(BUILT_IN_PREDICATES).sort()).toEqual(registry.names);
    for (const name of registry.names) expect(registry.get(name)).toBe(BUILT_IN_PREDICATES[name]);
    expect(registry.get('nope')).toBeUndefined();
  });

  it('"timeout" handles a TimeoutRejectedError only', () => {
    const timeout = BUILT_IN_PREDICATES.timeout;
    const args = (outcome: unknown) => ({ outcome, context: undefined }) as never;
    expect(timeout(args({ ok: false, error: new TimeoutRejectedError(5) }))).toBe(true);
    expect(timeout(args({ ok: false, error: new Error('other') }))).toBe(false);
    expect(timeout(args({ ok: true, value: new TimeoutRejectedError(5) }))).toBe(false);
  });

  it('registers a predicate, replacing one of the same name', () => {
    const registry = new PredicateRegistry();
    const mine = () => true;
    const theirs = () => false;
    expect(registry.register('mine', mine)).toBe(registry);
    expect(registry.get('mine')).toBe(mine);
    registry.register('mine', theirs);
    expect(registry.get('mine')).toBe(theirs);
    expect(registry.names).toContain('mine');
  });

  it('resolves a name, a list of names (any of them) and a function', () => {
    const registry = new PredicateRegistry();
    const v = new OptionsValidator('x');
    const a = () => true;
    registry.register('a', () => false).register('b', () => true);
    expect(registry.resolve(undefined, v, 'p')).toBeUndefined();
    expect(registry.resolve(a, v, 'p')).toBe(a);
    expect(registry.resolve('b', v, 'p')).toBe(registry.get('b'));
    expect(registry.resolve(['a'], v, 'p')).toBe(registry.get('a'));
    const either = registry.resolve(['a', 'b'], v, 'p')!;
    expect(either({ outcome: { ok: true, value: 1 } } as never)).toBe(true);
    const neither = registry.resolve(['a', 'a'], v, 'p')!;
    expect(neither({ outcome: { ok: true, value: 1 } } as never)).toBe(false);
    expect(v.problems).toEqual([]);
  });

  it('reports a reference that is not a name, a list of names or a function, and names it does not know', () => {
    const registry = new PredicateRegistry();
    const v = new OptionsValidator('x');
    for (const reference of [42, [], ['all-errors', 3], {}, null])
      expect(registry.resolve(reference, v, 'p')).toBeUndefined();
    expect(v.problems.map((p) => [p.path, p.value, p.rule])).toEqual(
      [42, [], ['all-errors', 3], {}, null].map((value) => [
        'x.p',
        value,
        'must be a predicate name, a list of names or a function',
      ]),
    );
    const unknown = new OptionsValidator('');
    expect(registry.resolve(['all-errors', 'all-error', 'zzz'], unknown, 'retry.shouldHandle')).toBeUndefined();
    expect(unknown.problems).toEqual([
      {
        path: 'retry.shouldHandle',
        value: 'all-error',
        rule: expect.stringMatching(
          /^is not a registered predicate \(did you mean "all-errors"\?; known: all-errors, /,
        ),
      },
      {
        path: 'retry.shouldHandle',
        value: 'zzz',
        rule: `is not a registered predicate (known: ${registry.names.join(', ')})`,
      },
    ]);
  });
});
