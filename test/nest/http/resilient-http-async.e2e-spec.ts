import 'reflect-metadata';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { Injectable, Module } from '@nestjs/common';
import { ConfigModule, ConfigService } from '@nestjs/config';
import { Test, type TestingModule } from '@nestjs/testing';
import {
  isResilienceValidationError,
  ResilienceModule,
  ResiliencePipelineRegistry,
  type ValidationIssue,
} from '../../../src/index.js';
import {
  getResilientHttpClientToken,
  InjectResilientHttpClient,
  ResilientHttpClient,
  ResilientHttpModule,
  type ResilientHttpModuleOptions,
  type ResilientHttpOptionsFactory,
} from '../../../src/nest/http/index.js';
import { FakeTimeProvider } from '../../../src/testing/index.js';
import { turns } from '../../utils/flaky.js';
import { hang, json, Replica } from './replica.server.js';

describe('ResilientHttpModule.registerAsync and forFeature', () => {
  const primary = new Replica('primary');
  const secondary = new Replica('secondary');
  const modules: TestingModule[] = [];

  async function compile(
    imports: unknown[],
    providers: unknown[] = [],
    timeProvider?: FakeTimeProvider,
  ): Promise<TestingModule> {
    const moduleRef = await Test.createTestingModule({
      imports: [ResilienceModule.forRoot({ timeProvider }), ...(imports as never[])],
      providers: providers as never[],
    }).compile();
    modules.push(moduleRef);
    return moduleRef;
  }

  async function startupError(imports: unknown[]): Promise<ValidationIssue[]> {
    const error = await compile(imports).catch((e: unknown) => e);
    expect(isResilienceValidationError(error)).toBe(true);
    return (error as { issues: ValidationIssue[] }).issues;
  }

  beforeAll(async () => {
    await Promise.all([primary.start(), secondary.start()]);
  });

  afterEach(async () => {
    await Promise.all(modules.splice(0).map((m) => m.close()));
    for (const r of [primary, secondary]) {
      r.hits = 0;
      r.handler = (_req, res) => json(res, 200, { server: r.name });
    }
  });

  afterAll(async () => {
    await Promise.all([primary.stop(), secondary.stop()]);
  });

  /** Configuration as `@nestjs/config` would load it from the environment or a file. */
  const configuration = () => ({
    catalog: { primary: primary.url, secondary: secondary.url, hedgingDelay: 100 },
    payments: { baseURL: primary.url, attemptTimeout: 2_000 },
  });

  it('takes the hedging endpoints and timeouts from ConfigService', async () => {
    const time = new FakeTimeProvider(Date.now());
    const moduleRef = await compile(
      [
        ConfigModule.forRoot({ ignoreEnvFile: true, load: [configuration] }),
        ResilientHttpModule.registerAsync({
          name: 'catalog',
          imports: [ConfigModule],
          inject: [ConfigService],
          useFactory: (config: ConfigService): ResilientHttpModuleOptions => ({
            hedging: {
              routing: {
                groups: [
                  { endpoints: [config.getOrThrow<string>('catalog.primary')] },
                  { endpoints: [config.getOrThrow<string>('catalog.secondary')] },
                ],
              },
              hedging: { delay: config.getOrThrow<number>('catalog.hedgingDelay') },
            },
          }),
        }),
      ],
      [],
      time,
    );
    primary.handler = hang;
    const catalog = moduleRef.get<ResilientHttpClient>(getResilientHttpClientToken('catalog'));
    const response = catalog.get('/products/1');
    await primary.hitCount(1);
    // The configured 100 ms, not the default 2 s: the secondary is asked at 100 ms and not before.
    await time.advanceAsync(99);
    expect(time.pendingDelays[0]).toBe(1); // the hedge is due at exactly the configured delay
    await turns();
    expect(secondary.hits).toBe(0);
    await time.advanceAsync(1);
    expect((await response).data).toEqual({ server: 'secondary' });
    await primary.abortedCount(1); // the slow primary was aborted
    expect(moduleRef.get(ResiliencePipelineRegistry).pipelineNames).toEqual(
      expect.arrayContaining(['http-hedging:catalog', 'http-hedging:catalog:endpoint']),
    );
  });

  it('takes a standard client from ConfigService, the default client injectable by class', async () => {
    const moduleRef = await compile([
      ConfigModule.forRoot({ ignoreEnvFile: true, load: [configuration] }),
      ResilientHttpModule.registerAsync({
        imports: [ConfigModule],
        inject: [ConfigService],
        useFactory: async (config: ConfigService) => ({
          baseURL: config.getOrThrow<string>('payments.baseURL'),
          pipeline: { attemptTimeout: config.getOrThrow<number>('payments.attemptTimeout'), retry: { delay: 0 } },
        }),
      }),
    ]);
    const http = moduleRef.get(ResilientHttpClient);
    expect(http).toBe(moduleRef.get(getResilientHttpClientToken()));
    expect((await http.get('/pay')).data).toEqual({ server: 'primary' });
    expect(moduleRef.get(ResiliencePipelineRegistry).getPipelineConfig('http:default')?.timeout).toBe(2_000);
  });

  it('accepts useClass and useExisting', async () => {
    @Injectable()
    class CatalogOptions implements ResilientHttpOptionsFactory {
      createResilientHttpOptions(): ResilientHttpModuleOptions {
        return { baseURL: secondary.url };
      }
    }
    @Module({ providers: [CatalogOptions], exports: [CatalogOptions] })
    class OptionsModule {}

    const moduleRef = await compile([
      ResilientHttpModule.registerAsync({ name: 'byClass', useClass: CatalogOptions }),
      ResilientHttpModule.registerAsync({ name: 'byExisting', imports: [OptionsModule], useExisting: CatalogOptions }),
    ]);
    for (const name of ['byClass', 'byExisting']) {
      const http = moduleRef.get<ResilientHttpClient>(getResilientHttpClientToken(name));
      expect((await http.get('/x')).data).toEqual({ server: 'secondary' });
    }
  });

  it('forFeature registers several named clients, each injectable by name', async () => {
    @Injectable()
    class Gateway {
      constructor(
        @InjectResilientHttpClient('inventory') readonly inventory: ResilientHttpClient,
        @InjectResilientHttpClient('search') readonly search: ResilientHttpClient,
      ) {}
    }
    const moduleRef = await compile(
      [
        ConfigModule.forRoot({ ignoreEnvFile: true, load: [configuration] }),
        ResilientHttpModule.forFeature([
          { name: 'inventory', baseURL: primary.url },
          {
            name: 'search',
            imports: [ConfigModule],
            inject: [ConfigService],
            useFactory: (config: ConfigService) => ({
              hedging: { routing: { groups: [{ endpoints: [config.getOrThrow<string>('catalog.secondary')] }] } },
            }),
          },
        ]),
      ],
      [Gateway],
    );
    const gateway = moduleRef.get(Gateway);
    expect((await gateway.inventory.get('/i')).data).toEqual({ server: 'primary' });
    expect((await gateway.search.get('/s')).data).toEqual({ server: 'secondary' });
    expect(gateway.inventory).not.toBe(gateway.search);
  });

  it('fails the start with one error listing every problem of every client', async () => {
    const issues = await startupError([
      ConfigModule.forRoot({ ignoreEnvFile: true, load: [configuration] }),
      ResilientHttpModule.forFeature([
        { name: 'a', failureStatusCodes: [200, 404], perAuthority: 'yes' as never },
        {
          name: 'b',
          imports: [ConfigModule],
          inject: [ConfigService],
          useFactory: () => ({ name: 'other', baseURL: 'not a url', pipeline: { attemptTimeout: 60_000 } }),
        },
        { name: 'a' },
      ]),
    ]);
    expect(issues.map((i) => [i.path, i.value])).toEqual([
      ['ResilientHttpModule "a".perAuthority', 'yes'],
      ['ResilientHttpModule "a".failureStatusCodes[0]', 200],
      ['ResilientHttpModule "b".name', 'other'],
      ['ResilientHttpModule "b".baseURL', 'not a url'],
      ['ResilientHttpModule "b".pipeline.attemptTimeout', 60_000],
      ['ResilientHttpModule "b".pipeline.circuitBreaker.samplingDuration', 30_000],
      ['ResilientHttpModule "a".name', 'a'],
    ]);
    expect(issues.every((i) => i.rule.length > 0)).toBe(true);
  });

  it('reports the standard pipeline rules and an unknown pipeline name in the same error', async () => {
    const issues = await startupError([
      ResilientHttpModule.forFeature([
        { name: 'x', useFactory: () => ({ pipeline: { attemptTimeout: 40_000, totalTimeout: 30_000 } }) },
        { name: 'y', pipeline: 'nope' },
      ]),
    ]);
    expect(issues.map((i) => [i.path, i.value])).toEqual([
      ['ResilientHttpModule "x".pipeline.attemptTimeout', 40_000],
      ['ResilientHttpModule "x".pipeline.circuitBreaker.samplingDuration', 30_000],
      ['ResilientHttpModule "y".pipeline', 'nope'],
    ]);
  });

  it('a factory that returns nothing fails the start with its path', async () => {
    const issues = await startupError([
      ResilientHttpModule.registerAsync({ name: 'empty', useFactory: () => undefined as never }),
    ]);
    expect(issues.map((i) => i.path)).toEqual(['ResilientHttpModule "empty"']);
  });
});
