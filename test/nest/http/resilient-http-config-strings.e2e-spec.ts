import 'reflect-metadata';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { ConfigModule, ConfigService } from '@nestjs/config';
import { Test, type TestingModule } from '@nestjs/testing';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  isResilienceValidationError,
  ResilienceModule,
  ResiliencePipelineRegistry,
  TimeoutRejectedError,
  type ValidationIssue,
} from '../../../src/index.js';
import {
  getResilientHttpClientToken,
  ResilientHttpClient,
  ResilientHttpModule,
  type StandardHttpPipelineOptions,
} from '../../../src/nest/http/index.js';
import { FakeTimeProvider } from '../../../src/testing/index.js';

/** Module configuration from the environment: every value a string. */
describe('ResilientHttpModule: standard pipeline options given as strings', () => {
  const modules: TestingModule[] = [];
  let server: Server;
  let url: string;

  beforeAll(async () => {
    // Answers /slow never (until closed), anything else at once.
    server = createServer((req, res) => {
      if (req.url !== '/slow') res.end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterEach(async () => {
    await Promise.all(modules.splice(0).map((m) => m.close()));
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  async function start(pipeline: StandardHttpPipelineOptions, timeProvider?: FakeTimeProvider): Promise<TestingModule> {
    const moduleRef = await Test.createTestingModule({
      imports: [
        ResilienceModule.forRoot({ timeProvider }),
        ResilientHttpModule.register({ name: 'payments', baseURL: url, pipeline }),
      ],
    }).compile();
    modules.push(moduleRef);
    return moduleRef;
  }

  async function startupIssues(pipeline: StandardHttpPipelineOptions): Promise<ValidationIssue[]> {
    const error = await start(pipeline).catch((e: unknown) => e);
    expect(isResilienceValidationError(error)).toBe(true);
    return [...(error as { issues: ValidationIssue[] }).issues];
  }

  it('checks "40s" against the default total timeout, at the option the user wrote', async () => {
    const issues = await startupIssues({ attemptTimeout: '40s' });
    expect(issues).toContainEqual({
      path: 'ResilientHttpModule "payments".pipeline.attemptTimeout',
      value: 40_000,
      rule: 'must be <= totalTimeout (30000)',
    });
    // The breaker's rule sees the value read too.
    expect(issues).toContainEqual(
      expect.objectContaining({
        path: 'ResilientHttpModule "payments".pipeline.circuitBreaker.samplingDuration',
        rule: 'must be >= 2 × attemptTimeout (80000)',
      }),
    );
  });

  it('reads every form of duration before the rules (time span, ISO-8601, a numeric string)', async () => {
    expect(
      await startupIssues({
        totalTimeout: '00:00:05',
        attemptTimeout: 'PT6S',
        circuitBreaker: { samplingDuration: '60000' },
      }),
    ).toEqual([
      {
        path: 'ResilientHttpModule "payments".pipeline.attemptTimeout',
        value: 6_000,
        rule: 'must be <= totalTimeout (5000)',
      },
    ]);
    expect(await startupIssues({ circuitBreaker: { samplingDuration: '15s' } })).toEqual([
      {
        path: 'ResilientHttpModule "payments".pipeline.circuitBreaker.samplingDuration',
        value: 15_000,
        rule: 'must be >= 2 × attemptTimeout (20000)',
      },
    ]);
  });

  it("reports an unreadable string at the user's path, in the bare and the object form", async () => {
    expect(await startupIssues({ attemptTimeout: 'fast' })).toEqual([
      expect.objectContaining({ path: 'ResilientHttpModule "payments".pipeline.attemptTimeout', value: 'fast' }),
    ]);
    expect(await startupIssues({ totalTimeout: { timeout: 'soon' }, retry: { maxRetryAttempts: 'many' } })).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          path: 'ResilientHttpModule "payments".pipeline.totalTimeout.timeout',
          value: 'soon',
        }),
        expect.objectContaining({
          path: 'ResilientHttpModule "payments".pipeline.retry.maxRetryAttempts',
          value: 'many',
        }),
      ]),
    );
  });

  it('starts with "5s" and registers 5000 ms', async () => {
    const moduleRef = await start({ attemptTimeout: '5s', retry: { maxRetryAttempts: '2', delay: '200ms' } });
    const config = moduleRef.get(ResiliencePipelineRegistry).getPipelineConfig('http:payments')!;
    expect(config.timeout).toBe(5_000);
    expect(config.retry).toMatchObject({ maxRetryAttempts: 2, delay: 200 });
  });

  it('times an attempt out after the duration read from the string', async () => {
    const time = new FakeTimeProvider(Date.now());
    const moduleRef = await start({ attemptTimeout: '50ms', totalTimeout: '0.5s', retry: false }, time);
    const client = moduleRef.get<string, ResilientHttpClient>(getResilientHttpClientToken('payments'));
    await expect(client.get('/fast')).resolves.toMatchObject({ status: 200, data: 'ok' });
    let settled = false;
    const slow = client.get('/slow');
    slow.then(
      () => (settled = true),
      () => (settled = true),
    );
    await time.advanceAsync(49);
    expect(settled).toBe(false);
    await time.advanceAsync(1); // the attempt's 50 ms, not the total's 500
    await expect(slow).rejects.toBeInstanceOf(TimeoutRejectedError);
    await expect(slow).rejects.toMatchObject({ timeout: 50 });
  });

  it('takes the strings of ConfigService, as docs/http.md shows', async () => {
    const options = (attempt: string) =>
      Test.createTestingModule({
        imports: [
          ResilienceModule.forRoot(),
          ResilientHttpModule.registerAsync({
            name: 'payments',
            imports: [
              ConfigModule.forRoot({ ignoreEnvFile: true, load: [() => ({ PAYMENTS_ATTEMPT_TIMEOUT: attempt })] }),
            ],
            inject: [ConfigService],
            useFactory: (config: ConfigService) => ({
              baseURL: url,
              pipeline: { attemptTimeout: config.getOrThrow<string>('PAYMENTS_ATTEMPT_TIMEOUT') },
            }),
          }),
        ],
      }).compile();
    const error = await options('40s').catch((e: unknown) => e);
    expect(String(error)).toContain(
      'ResilientHttpModule "payments".pipeline.attemptTimeout: 40000 must be <= totalTimeout (30000)',
    );
    const moduleRef = await options('2s');
    modules.push(moduleRef);
    expect(moduleRef.get(ResiliencePipelineRegistry).getPipelineConfig('http:payments')!.timeout).toBe(2_000);
  });
});
