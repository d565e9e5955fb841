import 'reflect-metadata';
import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { Module, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { metrics, trace } from '@opentelemetry/api';
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
  type DataPoint,
  type MetricData,
  type MetricProducer,
} from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { ResilienceModule, ResiliencePipelineRegistry } from '../../src/index.js';
import { OpenTelemetryListener, RESILIENCE_METRICS } from '../../src/opentelemetry/index.js';

/**
 * The usual ESM start: `app.module.ts` (and so `ResilienceModule.forRoot({ telemetryListeners: [...] })`)
 * is evaluated before `main.ts` calls `sdk.start()`, which registers the global providers.
 */

interface Sdk {
  reader: PeriodicExportingMetricReader;
  exporter: InMemoryMetricExporter;
  provider: MeterProvider;
}

const started: { shutdown(): Promise<void> }[] = [];
const apps: INestApplication[] = [];

/** What `sdk.start()` does for metrics: a provider with a reader, registered globally. */
function startMetricsSdk(options: { global?: boolean; producers?: MetricProducer[] } = {}): Sdk {
  const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({
    exporter,
    exportIntervalMillis: 3_600_000,
    metricProducers: options.producers,
  });
  const provider = new MeterProvider({ readers: [reader] });
  started.push(provider);
  if (options.global !== false) expect(metrics.setGlobalMeterProvider(provider)).toBe(true);
  return { reader, exporter, provider };
}

async function collect({ reader, exporter }: Sdk): Promise<Map<string, MetricData>> {
  exporter.reset();
  await reader.forceFlush();
  const byName = new Map<string, MetricData>();
  for (const resource of exporter.getMetrics())
    for (const scope of resource.scopeMetrics)
      for (const metric of scope.metrics) byName.set(metric.descriptor.name, metric);
  return byName;
}

function points(metric: MetricData | undefined): DataPoint<unknown>[] {
  return metric?.dataPoints ?? [];
}

/** An app module as `app.module.ts` declares it: the listener is created when the module is evaluated. */
function appModule(listener: OpenTelemetryListener): new () => unknown {
  @Module({
    imports: [
      ResilienceModule.forRoot({
        logging: false,
        telemetryListeners: [listener],
        pipelines: {
          orders: { retry: { maxRetryAttempts: 2, delay: 0 } },
          inventory: { circuitBreaker: { kind: 'consecutive', failureThreshold: 1 } },
        },
      }),
    ],
  })
  class AppModule {}
  return AppModule;
}

async function startApp(module: new () => unknown): Promise<INestApplication> {
  const moduleRef = await Test.createTestingModule({ imports: [module] }).compile();
  const app = await moduleRef.createNestApplication({ logger: false }).init();
  apps.push(app);
  return app;
}

/** Two failures then a success: one pipeline execution, three attempts, two retries. */
async function runOrders(app: INestApplication, times = 1): Promise<void> {
  const orders = app.get(ResiliencePipelineRegistry).getPipeline<string>('orders');
  for (let i = 0; i < times; i++) {
    let calls = 0;
    await orders.execute(() => (++calls < 3 ? Promise.reject(new TypeError('flaky')) : 'ok'));
  }
}

/** One call through the pipeline with a circuit breaker, so its circuit exists. */
async function runInventory(app: INestApplication): Promise<void> {
  await app
    .get(ResiliencePipelineRegistry)
    .getPipeline('inventory')
    .execute(() => 'ok');
}

afterEach(async () => {
  jest.restoreAllMocks();
  await Promise.all(apps.splice(0).map((app) => app.close()));
  await Promise.all(started.splice(0).map((provider) => provider.shutdown()));
  metrics.disable();
  trace.disable();
});

describe('OpenTelemetryListener created before the SDK starts', () => {
  it('records metrics once the SDK registers its meter provider after the app has started', async () => {
    const listener = new OpenTelemetryListener();
    const app = await startApp(appModule(listener));
    const sdk = startMetricsSdk();
    await runOrders(app);
    await runInventory(app);

    const recorded = await collect(sdk);
    const pipeline = points(recorded.get(RESILIENCE_METRICS.pipelineDuration));
    expect(pipeline.map((p) => p.attributes['pipeline.name']).sort()).toEqual(['inventory', 'orders']);
    expect(points(recorded.get(RESILIENCE_METRICS.attemptDuration)).length).toBeGreaterThanOrEqual(3);
    expect(points(recorded.get(RESILIENCE_METRICS.strategyEvents))).toEqual([
      expect.objectContaining({
        value: 2,
        attributes: expect.objectContaining({ 'pipeline.name': 'orders', 'event.name': 'OnRetry' }),
      }),
    ]);
    // The registry was attached before the provider existed: the circuit gauge follows the provider.
    const gauge = points(recorded.get(RESILIENCE_METRICS.circuitState));
    expect(Object.fromEntries(gauge.map((p) => [p.attributes['circuit.state'], p.value]))).toEqual({
      closed: 1,
      open: 0,
      'half-open': 0,
      isolated: 0,
    });
  });

  it('records metrics when the SDK starts between the import of the app module and the app (main.ts order)', async () => {
    const module = appModule(new OpenTelemetryListener());
    const sdk = startMetricsSdk();
    const app = await startApp(module);
    await runOrders(app, 2);
    await runInventory(app);

    const recorded = await collect(sdk);
    expect(points(recorded.get(RESILIENCE_METRICS.pipelineDuration))).toEqual([
      expect.objectContaining({
        attributes: { 'pipeline.name': 'orders' },
        value: expect.objectContaining({ count: 2 }),
      }),
      expect.objectContaining({ attributes: { 'pipeline.name': 'inventory' } }),
    ]);
    expect(points(recorded.get(RESILIENCE_METRICS.circuitState)).length).toBe(4);
  });

  it('records spans once the SDK registers its tracer provider', async () => {
    const listener = new OpenTelemetryListener({ metrics: false });
    const app = await startApp(appModule(listener));
    const spans = new InMemorySpanExporter();
    const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] });
    started.push(tracerProvider);
    expect(trace.setGlobalTracerProvider(tracerProvider)).toBe(true);
    await runOrders(app);
    const [span] = spans.getFinishedSpans();
    expect(span.name).toBe('resilience orders');
    expect(span.events.map((e) => e.name)).toEqual([
      'ExecutionAttempt',
      'OnRetry',
      'ExecutionAttempt',
      'OnRetry',
      'ExecutionAttempt',
    ]);
  });

  it('looks the global provider up at a bounded rate while none is registered, and never once bound', async () => {
    let now = 1_000_000;
    jest.spyOn(Date, 'now').mockImplementation(() => now);
    const lookups = jest.spyOn(metrics, 'getMeter');
    const listener = new OpenTelemetryListener();
    const app = await startApp(appModule(listener));
    lookups.mockClear();

    await runOrders(app, 50); // 50 executions, 400 events, no SDK: one look.
    expect(lookups).toHaveBeenCalledTimes(1);

    const sdk = startMetricsSdk();
    await runOrders(app, 3); // within the same second: not looked at again, nothing recorded
    expect(lookups).toHaveBeenCalledTimes(1);
    expect(points((await collect(sdk)).get(RESILIENCE_METRICS.pipelineDuration))).toEqual([]);

    now += 1_000;
    await runOrders(app, 4);
    expect(lookups).toHaveBeenCalledTimes(2);
    now += 60_000;
    await runOrders(app, 50);
    expect(lookups).toHaveBeenCalledTimes(2); // bound: no lookup per event any more
    const [pipeline] = points((await collect(sdk)).get(RESILIENCE_METRICS.pipelineDuration));
    expect(pipeline.value).toMatchObject({ count: 54 });
  });

  it('keeps an explicit meterProvider, whatever is registered globally', async () => {
    const own = startMetricsSdk({ global: false });
    const listener = new OpenTelemetryListener({ meterProvider: own.provider });
    const app = await startApp(appModule(listener));
    const global = startMetricsSdk();
    await runOrders(app);
    expect(points((await collect(own)).get(RESILIENCE_METRICS.pipelineDuration))).toHaveLength(1);
    expect((await collect(global)).size).toBe(0);
  });

  it('producer mode: the reader the SDK is started with later collects what the listener aggregated', async () => {
    const listener = new OpenTelemetryListener({ metricsExport: 'producer' });
    const app = await startApp(appModule(listener));
    const sdk = startMetricsSdk({ producers: [listener.metricProducer] });
    await runOrders(app, 2);
    await runInventory(app);

    const recorded = await collect(sdk);
    expect(points(recorded.get(RESILIENCE_METRICS.pipelineDuration))).toEqual([
      expect.objectContaining({
        attributes: { 'pipeline.name': 'orders' },
        value: expect.objectContaining({ count: 2 }),
      }),
      expect.objectContaining({ attributes: { 'pipeline.name': 'inventory' } }),
    ]);
    expect(points(recorded.get(RESILIENCE_METRICS.strategyEvents))).toEqual([
      expect.objectContaining({ value: 4, attributes: expect.objectContaining({ 'event.name': 'OnRetry' }) }),
    ]);
    expect(points(recorded.get(RESILIENCE_METRICS.circuitState)).length).toBe(4);
  });
});
