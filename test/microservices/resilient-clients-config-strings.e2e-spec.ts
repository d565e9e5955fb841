import 'reflect-metadata';
import { afterEach, describe, expect, it } from '@jest/globals';
import { Transport } from '@nestjs/microservices';
import { Test, type TestingModule } from '@nestjs/testing';
import {
  isResilienceValidationError,
  ResilienceModule,
  ResiliencePipelineRegistry,
  type ValidationIssue,
} from '../../src/index.js';
import { ResilientClientsModule, type StandardRpcPipelineOptions } from '../../src/nest/microservices/index.js';

/** Module configuration from the environment: every value a string. */
describe('ResilientClientsModule: standard pipeline options given as strings', () => {
  const modules: TestingModule[] = [];

  afterEach(async () => {
    await Promise.all(modules.splice(0).map((m) => m.close()));
  });

  async function start(pipeline: StandardRpcPipelineOptions): Promise<TestingModule> {
    const moduleRef = await Test.createTestingModule({
      imports: [
        ResilienceModule.forRoot(),
        ResilientClientsModule.register({
          // Never connected: the clients connect on their first message.
          clients: { billing: { client: { transport: Transport.TCP, options: { port: 1 } }, pipeline } },
        }),
      ],
    }).compile();
    modules.push(moduleRef);
    return moduleRef;
  }

  async function startupIssues(pipeline: StandardRpcPipelineOptions): Promise<ValidationIssue[]> {
    const error = await start(pipeline).catch((e: unknown) => e);
    expect(isResilienceValidationError(error)).toBe(true);
    return [...(error as { issues: ValidationIssue[] }).issues];
  }

  it('checks "40s" against the default total timeout, at the option the user wrote', async () => {
    expect(await startupIssues({ attemptTimeout: '40s' })).toEqual([
      { path: 'clients.billing.pipeline.attemptTimeout', value: 40_000, rule: 'must be <= totalTimeout (10000)' },
    ]);
    expect(await startupIssues({ totalTimeout: '1s', attemptTimeout: 'PT2S' })).toEqual([
      { path: 'clients.billing.pipeline.attemptTimeout', value: 2_000, rule: 'must be <= totalTimeout (1000)' },
    ]);
  });

  it("reports an unreadable string at the user's path, in the bare and the object form", async () => {
    expect(await startupIssues({ attemptTimeout: 'fast' })).toEqual([
      expect.objectContaining({ path: 'clients.billing.pipeline.attemptTimeout', value: 'fast' }),
    ]);
    expect(await startupIssues({ attemptTimeout: { timeout: 'fast' }, retry: { delay: 'soon' } })).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ path: 'clients.billing.pipeline.attemptTimeout.timeout', value: 'fast' }),
        expect.objectContaining({ path: 'clients.billing.pipeline.retry.delay', value: 'soon' }),
      ]),
    );
  });

  it('starts with "5s" and registers 5000 ms', async () => {
    const moduleRef = await start({
      attemptTimeout: '5s',
      totalTimeout: '00:00:30',
      retry: { maxRetryAttempts: '1', useJitter: 'false' },
      circuitBreaker: { failureThreshold: '3', breakDuration: '1m' },
    });
    expect(moduleRef.get(ResiliencePipelineRegistry).getPipelineConfig('rpc:billing')).toMatchObject({
      timeout: 5_000,
      totalTimeout: 30_000,
      retry: { maxRetryAttempts: 1, useJitter: false },
      circuitBreaker: { failureThreshold: 3, breakDuration: 60_000 },
    });
  });
});
