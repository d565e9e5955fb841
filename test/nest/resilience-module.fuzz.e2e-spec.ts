import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Test } from '@nestjs/testing';
import fc from 'fast-check';
import { ResilienceModule, ResiliencePipelineRegistry, type PipelineConfig } from '../../src/index.js';
import { CapturingLogger } from '../utils/capturing.logger.js';
import { expectStartedOrOneValidationError, pipelines, prototypeFingerprint } from '../utils/config.arbitraries.js';

/** Starts a Nest app on `ResilienceModule.forRoot({ pipelines })`; the error it failed with, if any. */
async function start(config: unknown): Promise<unknown> {
  let app: Awaited<ReturnType<typeof compile>> | undefined;
  async function compile() {
    const moduleRef = await Test.createTestingModule({
      imports: [ResilienceModule.forRoot({ pipelines: config as Record<string, PipelineConfig> })],
    }).compile();
    return moduleRef.createNestApplication({ logger: new CapturingLogger() });
  }
  try {
    app = await compile();
    await app.init();
    const registry = app.get(ResiliencePipelineRegistry);
    for (const name of registry.pipelineNames) registry.getPipeline(name);
    return undefined;
  } catch (error) {
    return error;
  } finally {
    await app?.close();
  }
}

describe('ResilienceModule.forRoot with fuzzed configuration', () => {
  let before: string[];
  beforeAll(() => {
    before = prototypeFingerprint();
  });
  afterAll(() => {
    expect(prototypeFingerprint()).toEqual(before);
  });

  it('starts or fails with one ResilienceValidationError whose every problem has a path', async () => {
    await fc.assert(
      fc.asyncProperty(pipelines, async (config) => {
        expectStartedOrOneValidationError(await start(config));
        expect(prototypeFingerprint()).toEqual(before);
      }),
      { numRuns: 60 },
    );
  });

  it('starts with 10,000 pipelines, or reports each invalid one in the same error', async () => {
    const valid: Record<string, PipelineConfig> = {};
    const mixed: Record<string, unknown> = {};
    for (let i = 0; i < 10_000; i++) {
      valid[`p${i}`] = { retry: { delay: 0 }, timeout: 100 };
      mixed[`p${i}`] = i % 1_000 === 0 ? { retry: { maxRetryAttempts: -1 } } : { timeout: 100 };
    }
    expect(await start(valid)).toBeUndefined();
    const error = await start(mixed);
    expectStartedOrOneValidationError(error);
    expect((error as { issues: { path: string }[] }).issues.map((i) => i.path)).toHaveLength(10);
  });

  it('a JSON config with prototype keys pollutes nothing', async () => {
    const config = JSON.parse('{"__proto__": {"polluted": {"x": 1}}, "constructor": {"prototype": {"polluted": 1}}}');
    expectStartedOrOneValidationError(await start(config));
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(prototypeFingerprint()).toEqual(before);
  });
});
