import 'reflect-metadata';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Injectable, type INestApplication, type LoggerService } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import request from 'supertest';
import type { App } from 'supertest/types.js';
import { parse as parseYaml } from 'yaml';
import {
  registerStrategy,
  ResilienceModule,
  ResiliencePipelineBuilder,
  ResiliencePipelineRegistry,
  ResilienceValidationError,
  unregisterStrategy,
  type PipelineConfig,
} from '../../src/index.js';
import { ResilienceAdminModule } from '../../src/nest/admin/index.js';
import { OpenTelemetryListener, RESILIENCE_METRICS } from '../../src/opentelemetry/index.js';
import { Toy, toyStrategy, type ToyConfig } from './index.js';

// The one catalog line (before any class uses `@Toy`): the toy section composes right inside retry.
registerStrategy('toy', toyStrategy, { after: 'retry' });
afterAll(() => unregisterStrategy('toy'));

declare module '../../src/config/pipeline-config/pipeline-config.model.js' {
  interface PipelineConfig {
    toy?: ToyConfig;
  }
}

function issuesOf(run: () => unknown): { path: string; value: unknown; rule: string }[] {
  try {
    run();
  } catch (error) {
    if (error instanceof ResilienceValidationError) return [...error.issues];
    throw error;
  }
  throw new Error('expected a ResilienceValidationError');
}

describe('a strategy of one own, added as a folder and one catalog line', () => {
  it('has a builder shortcut from its folder', async () => {
    const pipeline = new ResiliencePipelineBuilder<number>().addToy({ factor: 3 }).build();
    await expect(pipeline.execute(() => 14)).resolves.toBe(42);
  });

  it('is a configuration section, from an object or from YAML with strings read by its schema', async () => {
    const fromYaml = parseYaml('toy:\n  factor: "3"\n  enabled: "true"\nretry:\n  delay: 0s\n') as PipelineConfig;
    const registry = new ResiliencePipelineRegistry({
      pipelines: { object: { toy: { factor: 2 } }, yaml: fromYaml, bare: { toy: '5' } as unknown as PipelineConfig },
    });
    await expect(registry.getPipeline<number>('object').execute(() => 7)).resolves.toBe(14);
    await expect(registry.getPipeline<number>('yaml').execute(() => 7)).resolves.toBe(21);
    await expect(registry.getPipeline<number>('bare').execute(() => 7)).resolves.toBe(35);
    expect(
      registry
        .getPipeline('yaml')
        .describe()
        .map((s) => s.type),
    ).toEqual(['retry', 'toy']);
    await registry.dispose();
  });

  it('reports its options at start-up with path, value and rule, as the built-in ones do', () => {
    const issues = issuesOf(
      () => new ResiliencePipelineRegistry({ pipelines: { bad: { toy: { factor: 0, fctor: 2 } as never } } }),
    );
    expect(issues).toEqual([
      { path: 'pipelines.bad.toy.fctor', value: 2, rule: 'is not a known option (did you mean "factor"?)' },
      { path: 'pipelines.bad.toy.factor', value: 0, rule: 'must be a number >= 1' },
    ]);
    expect(issuesOf(() => new ResiliencePipelineRegistry({ pipelines: { bad: { tyo: {} } as never } }))).toEqual([
      expect.objectContaining({ path: 'pipelines.bad.tyo', rule: expect.stringContaining('did you mean "toy"?') }),
    ]);
  });

  describe('in a Nest application', () => {
    const lines: string[] = [];
    const logger: LoggerService = {
      log: (m: string) => lines.push(m),
      warn: (m: string) => lines.push(m),
      error: (m: string) => lines.push(m),
      debug: (m: string) => lines.push(m),
    };
    const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
    const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
    const meterProvider = new MeterProvider({ readers: [reader] });
    let app: INestApplication<App>;

    @Injectable()
    class PriceService {
      @Toy({ factor: 2 })
      inline(price: number): number {
        return price;
      }

      @Toy('pricing')
      named(price: number): number {
        return price;
      }
    }

    beforeAll(async () => {
      const moduleRef = await Test.createTestingModule({
        imports: [
          ResilienceModule.forRoot({
            logging: { logger, rateLimit: false },
            telemetryListeners: [new OpenTelemetryListener({ meterProvider })],
            pipelines: { pricing: { toy: { factor: 3, name: 'pricing-toy' } } },
          }),
          ResilienceAdminModule.forRoot({ unprotected: true, dashboard: true }),
        ],
        providers: [PriceService],
      }).compile();
      app = moduleRef.createNestApplication<INestApplication<App>>({ logger: false });
      await app.init();
    });

    afterAll(async () => {
      await app.close();
      await meterProvider.shutdown();
    });

    it('runs its decorator, inline or naming a pipeline', async () => {
      const service = app.get(PriceService);
      await expect(service.inline(10)).resolves.toBe(20);
      await expect(service.named(10)).resolves.toBe(30);
    });

    it('logs its events with their figures', () => {
      expect(lines).toEqual(
        expect.arrayContaining([
          'OnToyApplied pipeline=PriceService.inline strategy=toy operation=PriceService.inline factor=2',
          'OnToyApplied pipeline=pricing strategy=pricing-toy operation=PriceService.named factor=3',
        ]),
      );
    });

    it('counts its events in OpenTelemetry metrics', async () => {
      exporter.reset();
      await reader.forceFlush();
      const metric = exporter
        .getMetrics()
        .flatMap((r) => r.scopeMetrics.flatMap((s) => s.metrics))
        .find((m) => m.descriptor.name === RESILIENCE_METRICS.strategyEvents);
      expect(metric?.dataPoints).toEqual(
        expect.arrayContaining([
          expect.objectContaining({
            value: 1,
            attributes: expect.objectContaining({ 'event.name': 'OnToyApplied', 'pipeline.name': 'pricing' }),
          }),
        ]),
      );
    });

    it('shows in the admin API and the dashboard data', async () => {
      const server = app.getHttpServer();
      const pipelines = await request(server).get('/resilience/pipelines').expect(200);
      expect(pipelines.body).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ name: 'pricing', strategies: [{ type: 'toy', name: 'pricing-toy' }] }),
        ]),
      );
      await (app.get(PriceService).named(1) as unknown as Promise<number>);
      const recent = await request(server).get('/resilience/events/recent').expect(200);
      expect(recent.body).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ eventName: 'OnToyApplied', pipelineName: 'pricing', details: 'factor=3' }),
        ]),
      );
    });
  });
});
