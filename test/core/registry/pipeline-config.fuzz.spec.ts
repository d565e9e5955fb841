import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { ResiliencePipelineRegistry, ResilienceValidationError, type PipelineConfig } from '../../../src/core.entry.js';
import { FakeTimeProvider } from '../../../src/testing/index.js';
import { expectStartedOrOneValidationError, pipelines, prototypeFingerprint } from '../../utils/config.arbitraries.js';

async function construct(config: unknown): Promise<unknown> {
  let registry: ResiliencePipelineRegistry | undefined;
  try {
    registry = new ResiliencePipelineRegistry({
      timeProvider: new FakeTimeProvider(),
      pipelines: config as Record<string, PipelineConfig>,
    });
    for (const name of registry.pipelineNames) registry.getPipeline(name);
    return undefined;
  } catch (error) {
    return error;
  } finally {
    await registry?.dispose();
  }
}

describe('pipeline configuration from data (fuzzed)', () => {
  let before: string[];
  beforeAll(() => {
    before = prototypeFingerprint();
  });
  afterAll(() => {
    expect(prototypeFingerprint()).toEqual(before);
  });

  it('the registry starts or throws one ResilienceValidationError with a path for every problem', async () => {
    await fc.assert(
      fc.asyncProperty(pipelines, async (config) => {
        expectStartedOrOneValidationError(await construct(config));
        expect(prototypeFingerprint()).toEqual(before);
        expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      }),
      { numRuns: 400 },
    );
  }, 30_000); // 400 configurations: seconds, more under load or mutation testing

  it('a pipelines value that is not an object is one validation error; null (an empty YAML key) is none', async () => {
    expect(await construct(null)).toBeUndefined();
    for (const value of [3, 0, 'orders', '', true, false, NaN]) {
      const error = await construct(value);
      expect(error).toBeInstanceOf(ResilienceValidationError);
      expect((error as ResilienceValidationError).issues.map((i) => i.path)).toEqual(['pipelines']);
    }
  });

  it('prototype keys are data: a pipeline named __proto__ is registered, and nothing is polluted', async () => {
    const config = JSON.parse(
      '{"__proto__": {"retry": {"delay": 0}, "polluted": 1}, "constructor": {"timeout": 100}, "prototype": {}}',
    ) as Record<string, unknown>;
    const error = await construct(config);
    // Whatever the verdict on the section "polluted", the prototype is untouched.
    expectStartedOrOneValidationError(error);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(prototypeFingerprint()).toEqual(before);
    const valid = JSON.parse('{"__proto__": {"retry": {"delay": 0}}, "constructor": {"timeout": 100}}') as Record<
      string,
      PipelineConfig
    >;
    const registry = new ResiliencePipelineRegistry({ timeProvider: new FakeTimeProvider(), pipelines: valid });
    expect(registry.pipelineNames).toEqual(['__proto__', 'constructor']);
    await registry.dispose();
  });

  it.each<[string, unknown]>([
    ['circuitBreaker', 'toString'],
    ['circuitBreaker', '__proto__'],
    ['circuitBreaker', { toString: null }],
    ['rateLimiter', 'toString'],
    ['rateLimiter', 'constructor'],
    ['rateLimiter', { toString: null }],
  ])('%s with kind %j is one validation error at .kind', async (sectionName, kind) => {
    const error = await construct({ orders: { [sectionName]: { kind } } });
    expect(error).toBeInstanceOf(ResilienceValidationError);
    expect((error as ResilienceValidationError).issues.map((i) => i.path)).toEqual([
      `pipelines.orders.${sectionName}.kind`,
    ]);
  });

  it('deep nesting inside a section is one validation error, not a stack overflow', async () => {
    let deep: Record<string, unknown> = { leaf: 1 };
    let list: unknown[] = [];
    for (let i = 0; i < 100_000; i++) {
      deep = { nested: deep };
      list = [list];
    }
    const error = await construct({ orders: { retry: { budget: deep, shouldHandle: list }, circuitBreaker: deep } });
    expectStartedOrOneValidationError(error);
    expect(error).toBeInstanceOf(ResilienceValidationError);
  });

  it('10,000 pipelines: every problem of every invalid one in one error; all valid ones start', async () => {
    const config: Record<string, unknown> = {};
    for (let i = 0; i < 10_000; i++) {
      config[`p${i}`] = i % 2 === 0 ? { retry: { delay: 0 }, timeout: 100 } : { retry: { delay: -i }, timeout: NaN };
    }
    const error = (await construct(config)) as ResilienceValidationError;
    expect(error).toBeInstanceOf(ResilienceValidationError);
    expect(error.issues).toHaveLength(10_000);
    expect(error.issues[0].path).toBe('pipelines.p1.retry.delay');

    const valid: Record<string, PipelineConfig> = {};
    for (let i = 0; i < 10_000; i++) valid[`p${i}`] = { retry: { delay: 0 }, circuitBreaker: {}, timeout: 100 };
    const registry = new ResiliencePipelineRegistry({ timeProvider: new FakeTimeProvider(), pipelines: valid });
    expect(registry.pipelineNames).toHaveLength(10_000);
    await registry.dispose();
  }, 30_000); // 20,000 pipelines: seconds, more under load or mutation testing
});
