/**
 * What observability costs on the success path: the same pipeline (retry → circuit breaker → timeout)
 * with no listener, with a no-op listener, with the Nest module's default logger, and with the
 * OpenTelemetry listener (metrics SDK installed, a reader that never exports: no I/O) in its two modes —
 * through the API's instruments, and aggregated locally and handed to the reader as a `MetricProducer` —
 * and with traces through a tracer SDK whose sampler drops every span (`AlwaysOffSampler`).
 *
 * `observabilityScenarios()` is part of `npm run bench` (one fresh process per case and sweep, order
 * rotated between sweeps); `OBSERVABILITY_TARGETS` are the four ratios it checks. Running this file
 * (`node dist/bench/observability.bench.js [--sweeps=N]`) runs only this scenario through the same runner.
 */
import { Logger } from '@nestjs/common';
import { metrics } from '@opentelemetry/api';
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
  type MetricProducer,
} from '@opentelemetry/sdk-metrics';
import { AlwaysOffSampler, BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import { execFileSync } from 'node:child_process';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ResilienceLoggerListener, ResiliencePipelineBuilder, type TelemetryListener } from '../src/index.js';
import { OpenTelemetryListener } from '../src/opentelemetry/index.js';
import type { BenchCase, BenchRun, BenchScenario } from './bench.harness.js';
import { bareCase, value } from './reference.bench.js';

export const OBSERVABILITY_SCENARIO = 'observability';
export const NO_LISTENER = 'no listener';
export const NOOP_LISTENER = 'a no-op listener (wants every event)';
export const DEFAULT_LOGGER = 'default module logger';
export const OTEL_INSTRUMENTS = 'OpenTelemetry, instruments (metrics SDK)';
export const OTEL_PRODUCER = 'OpenTelemetry, producer (metrics SDK)';
export const OTEL_TRACES_OFF = 'OpenTelemetry, instruments + traces (AlwaysOff sampler)';
export const OTEL_TRACES_ON = 'OpenTelemetry, instruments + traces (recording, exported nowhere)';

/** A ratio `case` / `vs` of one scenario must stay at or under `max`. */
export interface CaseTarget {
  readonly scenario: string;
  readonly case: string;
  readonly vs: string;
  readonly max: number;
}

/** The four ratios observability is held to (same run, fresh processes). */
export const OBSERVABILITY_TARGETS: readonly CaseTarget[] = [
  { scenario: OBSERVABILITY_SCENARIO, case: DEFAULT_LOGGER, vs: NO_LISTENER, max: 1.05 },
  { scenario: OBSERVABILITY_SCENARIO, case: OTEL_INSTRUMENTS, vs: NO_LISTENER, max: 1.5 },
  { scenario: OBSERVABILITY_SCENARIO, case: OTEL_PRODUCER, vs: NO_LISTENER, max: 1.3 },
  { scenario: OBSERVABILITY_SCENARIO, case: OTEL_TRACES_OFF, vs: OTEL_INSTRUMENTS, max: 1.1 },
];

const pipeline = (listeners: TelemetryListener[]) =>
  new ResiliencePipelineBuilder({ name: 'bench', telemetryListeners: listeners })
    .addRetry({ maxRetryAttempts: 3, delay: 0 })
    .addCircuitBreaker({ kind: 'consecutive', failureThreshold: 5 })
    .addTimeout(10_000)
    .build();

const run = (listeners: TelemetryListener[]): BenchRun => {
  const p = pipeline(listeners);
  return () => p.execute(value);
};

/** A meter provider with one reader that exports once a day (never during a run): no I/O. */
function meterProvider(producer?: MetricProducer): MeterProvider {
  const reader = new PeriodicExportingMetricReader({
    exporter: new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE),
    exportIntervalMillis: 24 * 3_600_000,
    metricProducers: producer ? [producer] : undefined,
  });
  const provider = new MeterProvider({ readers: [reader] });
  metrics.setGlobalMeterProvider(provider);
  return provider;
}

/** Each case builds its own pipeline, listener and SDK in its own process. */
export function observabilityScenarios(): BenchScenario[] {
  const ours = (name: string, setup: () => BenchRun): BenchCase => ({ name, setup, ours: true });
  return [
    {
      id: OBSERVABILITY_SCENARIO,
      title: 'observability: retry → circuit breaker → timeout, success',
      cases: [
        bareCase,
        ours(NO_LISTENER, () => run([])),
        ours(NOOP_LISTENER, () => run([{ write: () => undefined }])),
        ours(DEFAULT_LOGGER, () => {
          Logger.overrideLogger(false); // the success path logs nothing; keep stray lines off the table
          return run([new ResilienceLoggerListener()]);
        }),
        ours(OTEL_INSTRUMENTS, () =>
          run([new OpenTelemetryListener({ meterProvider: meterProvider(), traces: false })]),
        ),
        ours(OTEL_PRODUCER, () => {
          const listener = new OpenTelemetryListener({ metricsExport: 'producer', traces: false });
          meterProvider(listener.metricProducer);
          return run([listener]);
        }),
        ours(OTEL_TRACES_OFF, () => {
          const tracerProvider = new BasicTracerProvider({ sampler: new AlwaysOffSampler() });
          return run([new OpenTelemetryListener({ meterProvider: meterProvider(), tracerProvider })]);
        }),
        ours(OTEL_TRACES_ON, () => {
          const tracerProvider = new BasicTracerProvider(); // records spans, exports nowhere
          return run([new OpenTelemetryListener({ meterProvider: meterProvider(), tracerProvider })]);
        }),
      ],
    },
  ];
}

// Alone: `npm run bench`'s runner, filtered to this scenario.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const runner = fileURLToPath(new URL('./run.bench.js', import.meta.url));
  execFileSync(process.execPath, [runner, OBSERVABILITY_SCENARIO, ...process.argv.slice(2)], { stdio: 'inherit' });
}
