/**
 * What observability costs on the success path: the same pipeline (retry → circuit breaker → timeout)
 * with no listener, with the Nest logger listener, with the OpenTelemetry listener (metrics SDK
 * installed, a reader that never exports: no I/O) in its two modes — through the API's instruments, and
 * aggregated locally and handed to the reader as a `MetricProducer` — and with the logger and OpenTelemetry
 * together.
 *
 * Self-contained: `observabilityCases()` returns cases of the shape `{ group, name, run, iterations }`
 * any harness can measure (the repository's `bench.harness.ts` `BenchCase` has that shape), and running
 * this file (`node dist/bench/observability.bench.js`) measures them on its own and prints a table.
 */
import { Logger } from '@nestjs/common';
import { metrics } from '@opentelemetry/api';
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import os from 'node:os';
import { pathToFileURL } from 'node:url';
import { ResilienceLoggerListener, ResiliencePipelineBuilder, type TelemetryListener } from '../src/index.js';
import { OpenTelemetryListener } from '../src/opentelemetry/index.js';

/** One measured case (structurally the harness's `BenchCase`). */
export interface ObservabilityBenchCase {
  readonly group: string;
  readonly name: string;
  readonly run: () => Promise<unknown>;
  readonly iterations?: number;
}

export const OBSERVABILITY_GROUP = 'observability: retry → circuit breaker → timeout, success';
export const NO_LISTENER = 'no listener';

const value = async (): Promise<number> => 42;

/** The cases, and `dispose()` to shut the SDK providers down after measuring. */
export function observabilityCases(): { cases: ObservabilityBenchCase[]; dispose: () => Promise<void> } {
  // Created before the SDK registers the global meter provider, as `app.module.ts` is before `sdk.start()`.
  const late = new OpenTelemetryListener({ traces: false });
  const reader = new PeriodicExportingMetricReader({
    exporter: new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE),
    exportIntervalMillis: 24 * 3_600_000,
  });
  const producer = new OpenTelemetryListener({ metricsExport: 'producer', traces: false });
  const producerReader = new PeriodicExportingMetricReader({
    exporter: new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE),
    exportIntervalMillis: 24 * 3_600_000,
    metricProducers: [producer.metricProducer],
  });
  const meterProvider = new MeterProvider({ readers: [reader, producerReader] });
  metrics.setGlobalMeterProvider(meterProvider);
  const tracerProvider = new BasicTracerProvider(); // records spans, exports nowhere
  Logger.overrideLogger(false); // the success path logs nothing by default; keep stray lines off the table

  const pipeline = (listeners: TelemetryListener[]) =>
    new ResiliencePipelineBuilder({ name: 'bench', telemetryListeners: listeners })
      .addRetry({ maxRetryAttempts: 3, delay: 0 })
      .addCircuitBreaker({ kind: 'consecutive', failureThreshold: 5 })
      .addTimeout(10_000)
      .build();

  const logger = () => new ResilienceLoggerListener();
  const otelMetrics = () => new OpenTelemetryListener({ meterProvider, traces: false });
  const otelAll = () => new OpenTelemetryListener({ meterProvider, tracerProvider });
  const otelNoSdkTraces = () => new OpenTelemetryListener({ meterProvider, tracerProvider: undefined });

  const none = pipeline([]);
  const noop = pipeline([{ write: () => undefined }]);
  const logged = pipeline([logger()]);
  const measured = pipeline([otelMetrics()]);
  const measuredLate = pipeline([late]);
  const both = pipeline([logger(), otelNoSdkTraces()]);
  const traced = pipeline([logger(), otelAll()]);
  const produced = pipeline([producer]);
  const loggedProduced = pipeline([logger(), producer]);
  const g = OBSERVABILITY_GROUP;
  const cases: ObservabilityBenchCase[] = [
    { group: g, name: 'bare await fn()', run: () => value() },
    { group: g, name: NO_LISTENER, run: () => none.execute(value) },
    // The floor: what the engine's telemetry-enabled path costs with a listener that does nothing.
    { group: g, name: 'a no-op listener', run: () => noop.execute(value) },
    { group: g, name: 'logger listener', run: () => logged.execute(value) },
    { group: g, name: 'OpenTelemetry listener (metrics SDK)', run: () => measured.execute(value) },
    {
      group: g,
      name: 'OpenTelemetry listener created before the SDK (global meter provider)',
      run: () => measuredLate.execute(value),
    },
    { group: g, name: 'logger + OpenTelemetry (metrics SDK, no tracer SDK)', run: () => both.execute(value) },
    { group: g, name: 'OpenTelemetry, producer mode (metrics SDK)', run: () => produced.execute(value) },
    {
      group: g,
      name: 'logger + OpenTelemetry, producer mode (metrics SDK, no tracer SDK)',
      run: () => loggedProduced.execute(value),
    },
    {
      group: g,
      name: 'logger + OpenTelemetry (metrics SDK + tracer SDK recording)',
      run: () => traced.execute(value),
      iterations: 50_000,
    },
  ];
  return {
    cases,
    dispose: async () => {
      await meterProvider.shutdown();
      await tracerProvider.shutdown();
      metrics.disable();
    },
  };
}

async function loop(run: () => Promise<unknown>, iterations: number): Promise<number> {
  const start = process.hrtime.bigint();
  for (let i = 0; i < iterations; i++) await run();
  return Number(process.hrtime.bigint() - start) / iterations;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[sorted.length >> 1];
}

/** Interleaved rounds, median per case (the same method as the repository's harness). */
async function measure(cases: readonly ObservabilityBenchCase[], rounds = 9): Promise<Map<string, number>> {
  for (const c of cases) await loop(c.run, 20_000);
  const samples = cases.map(() => [] as number[]);
  for (let r = 0; r < rounds; r++) {
    for (const [i, c] of cases.entries()) samples[i].push(await loop(c.run, c.iterations ?? 100_000));
  }
  return new Map(cases.map((c, i) => [c.name, median(samples[i])]));
}

async function main(): Promise<void> {
  const { cases, dispose } = observabilityCases();
  const results = await measure(cases);
  const baseline = results.get(NO_LISTENER)!;
  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  const lines = [
    `Node ${process.version}, ${os.cpus().length} × ${cpu}, ${os.platform()} ${os.arch()}`,
    '',
    `| ${OBSERVABILITY_GROUP} | ns/call | × no listener |`,
    '| --- | ---: | ---: |',
    ...cases.map((c) => {
      const ns = results.get(c.name)!;
      return `| ${c.name} | ${ns.toFixed(0)} | ${(ns / baseline).toFixed(2)}× |`;
    }),
  ];
  console.log(lines.join('\n'));
  await dispose();
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) void main();
