import 'reflect-metadata';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { Controller, Get, Injectable, Module, type INestApplication, type NestMiddleware } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { context, trace, type Tracer } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  AggregationTemporality,
  DataPointType,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
  type DataPoint,
  type Histogram,
  type MetricData,
} from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import fc from 'fast-check';
import request from 'supertest';
import type { App } from 'supertest/types.js';
import {
  ResilienceContext,
  ResilienceModule,
  ResiliencePipelineBuilder,
  ResiliencePipelineRegistry,
  ResilienceValidationError,
  type ResiliencePipeline,
} from '../../src/index.js';
import { OpenTelemetryListener, RESILIENCE_METRICS } from '../../src/opentelemetry/index.js';
import { FakeTimeProvider } from '../../src/testing/index.js';

const contextManager = new AsyncLocalStorageContextManager().enable();
context.setGlobalContextManager(contextManager);

const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
const meterProvider = new MeterProvider({ readers: [reader] });
const spans = new InMemorySpanExporter();
const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] });
const tracer: Tracer = tracerProvider.getTracer('test');

afterAll(async () => {
  await meterProvider.shutdown();
  await tracerProvider.shutdown();
  context.disable();
});

async function collect(): Promise<Map<string, MetricData>> {
  exporter.reset();
  await reader.forceFlush();
  const byName = new Map<string, MetricData>();
  for (const resource of exporter.getMetrics()) {
    for (const scope of resource.scopeMetrics)
      for (const metric of scope.metrics) byName.set(metric.descriptor.name, metric);
  }
  return byName;
}

function points(metric: MetricData | undefined): DataPoint<unknown>[] {
  return metric?.dataPoints ?? [];
}

describe('OpenTelemetryListener', () => {
  const listener = new OpenTelemetryListener({ meterProvider, tracerProvider });
  const time = new FakeTimeProvider(0);
  let flaky: ResiliencePipeline<string>;

  beforeEach(() => spans.reset());

  beforeAll(() => {
    flaky = new ResiliencePipelineBuilder<string>({
      name: 'orders',
      instanceName: 'eu',
      timeProvider: time,
      telemetryListeners: [listener],
    })
      .addRetry({ name: 'orders-retry', maxRetryAttempts: 2, delay: 0 })
      .addCircuitBreaker({ kind: 'consecutive', failureThreshold: 5 })
      .build();
  });

  it("records Polly's instruments with Polly's tags", async () => {
    let calls = 0;
    await flaky.execute(
      () => {
        time.advance(5);
        return ++calls < 3 ? Promise.reject(new TypeError('flaky')) : 'ok';
      },
      { operationKey: 'list-orders' },
    );
    const metrics = await collect();

    const events = points(metrics.get(RESILIENCE_METRICS.strategyEvents));
    expect(metrics.get(RESILIENCE_METRICS.strategyEvents)!.dataPointType).toBe(DataPointType.SUM);
    expect(events).toEqual([
      expect.objectContaining({
        value: 2,
        attributes: {
          'pipeline.name': 'orders',
          'pipeline.instance': 'eu',
          'operation.key': 'list-orders',
          'strategy.name': 'orders-retry',
          'event.name': 'OnRetry',
          'event.severity': 'Warning',
          'exception.type': 'TypeError',
        },
      }),
    ]);

    const attempts = points(metrics.get(RESILIENCE_METRICS.attemptDuration));
    expect(metrics.get(RESILIENCE_METRICS.attemptDuration)!.descriptor.unit).toBe('ms');
    expect(
      attempts.map((p) => p.attributes).sort((a, b) => Number(a['attempt.number']) - Number(b['attempt.number'])),
    ).toEqual([
      expect.objectContaining({ 'attempt.number': 0, 'attempt.handled': true, 'exception.type': 'TypeError' }),
      expect.objectContaining({ 'attempt.number': 1, 'attempt.handled': true, 'exception.type': 'TypeError' }),
      {
        'pipeline.name': 'orders',
        'pipeline.instance': 'eu',
        'operation.key': 'list-orders',
        'strategy.name': 'orders-retry',
        'event.name': 'ExecutionAttempt',
        'event.severity': 'Information',
        'attempt.number': 2,
        'attempt.handled': false,
      },
    ]);
    expect(attempts.every((p) => (p.value as Histogram).sum === 5)).toBe(true);

    const pipeline = points(metrics.get(RESILIENCE_METRICS.pipelineDuration));
    expect(pipeline).toEqual([
      expect.objectContaining({
        attributes: { 'pipeline.name': 'orders', 'pipeline.instance': 'eu', 'operation.key': 'list-orders' },
      }),
    ]);
    expect((pipeline[0].value as Histogram).sum).toBe(15);
    expect((pipeline[0].value as Histogram).count).toBe(1);
  });

  it('records a span per execution, child of the active span, with an event per attempt and retry', async () => {
    let inner: string | undefined;
    await tracer.startActiveSpan('GET /orders', async (request) => {
      let calls = 0;
      await flaky.execute(() => {
        inner = trace.getActiveSpan()?.spanContext().spanId;
        return ++calls < 2 ? Promise.reject(new TypeError('flaky')) : 'ok';
      });
      request.end();
    });
    const finished = spans.getFinishedSpans();
    const requestSpan = finished.find((s) => s.name === 'GET /orders')!;
    const pipelineSpan = finished.find((s) => s.name === 'resilience orders')!;
    expect(pipelineSpan.parentSpanContext?.spanId).toBe(requestSpan.spanContext().spanId);
    expect(pipelineSpan.spanContext().traceId).toBe(requestSpan.spanContext().traceId);
    // What the callback traces nests under the pipeline's span.
    expect(inner).toBe(pipelineSpan.spanContext().spanId);
    expect(pipelineSpan.attributes).toEqual({ 'pipeline.name': 'orders', 'pipeline.instance': 'eu' });
    expect(pipelineSpan.events.map((e) => e.name)).toEqual(['ExecutionAttempt', 'OnRetry', 'ExecutionAttempt']);
    expect(pipelineSpan.events[1].attributes).toMatchObject({ 'attempt.number': 0, 'retry.delay': 0 });
    expect(pipelineSpan.status.code).toBe(0);
  });

  it("nests a nested pipeline's span under the outer one's, and the callback's spans under the innermost", async () => {
    const registry = new ResiliencePipelineRegistry({
      timeProvider: time,
      telemetryListeners: [listener],
      pipelines: { stock: { retry: { maxRetryAttempts: 1, delay: 0 } } },
    });
    const outer = registry.createBuilder('Orders.place').addPipeline(registry.getPipeline('stock')).build();
    const middle = registry.createBuilder('Orders.batch').addPipeline(outer).build();
    const seen: (string | undefined)[] = [];
    await tracer.startActiveSpan('GET /orders', async (request) => {
      await outer.execute(() => seen.push(trace.getActiveSpan()?.spanContext().spanId));
      await middle.execute(() => seen.push(trace.getActiveSpan()?.spanContext().spanId));
      request.end();
    });
    const finished = spans.getFinishedSpans();
    const id = (name: string, nth = 0) => finished.filter((s) => s.name === name)[nth].spanContext().spanId;
    const parent = (name: string, nth = 0) => finished.filter((s) => s.name === name)[nth].parentSpanContext?.spanId;
    expect(finished.map((s) => s.name).sort()).toEqual([
      'GET /orders',
      'resilience Orders.batch',
      'resilience Orders.place',
      'resilience Orders.place',
      'resilience stock',
      'resilience stock',
    ]);
    // outer.execute: request → Orders.place → stock → the callback.
    expect(parent('resilience Orders.place')).toBe(id('GET /orders'));
    expect(parent('resilience stock')).toBe(id('resilience Orders.place'));
    expect(seen[0]).toBe(id('resilience stock'));
    // middle.execute, three deep: request → Orders.batch → Orders.place → stock → the callback.
    expect(parent('resilience Orders.batch')).toBe(id('GET /orders'));
    expect(parent('resilience Orders.place', 1)).toBe(id('resilience Orders.batch'));
    expect(parent('resilience stock', 1)).toBe(id('resilience Orders.place', 1));
    expect(seen[1]).toBe(id('resilience stock', 1));
    // One trace throughout.
    expect(new Set(finished.map((s) => s.spanContext().traceId)).size).toBe(1);
  });

  it('records the failure as an exception, and the state change and the rejections as span events', async () => {
    const breaker = new ResiliencePipelineBuilder({
      name: 'payments',
      timeProvider: time,
      telemetryListeners: [listener],
    })
      .addCircuitBreaker({ kind: 'consecutive', failureThreshold: 1, breakDuration: 1_000 })
      .build();
    await breaker.executeOutcome(() => Promise.reject(new RangeError('boom')));
    await breaker.executeOutcome(() => 'never');
    const [first, second] = spans.getFinishedSpans();
    expect(first.events.map((e) => e.name)).toEqual(['OnCircuitOpened', 'exception']);
    expect(first.events[0].attributes).toMatchObject({ 'circuit.state': 'open', 'circuit.break_duration': 1_000 });
    expect(first.events[1].attributes).toMatchObject({ 'exception.type': 'RangeError', 'exception.message': 'boom' });
    expect(first.status).toEqual({ code: 2, message: 'RangeError' });
    expect(second.events.map((e) => e.name)).toEqual(['OnCircuitRejected', 'exception']);
    expect(second.attributes['exception.type']).toBe('BrokenCircuitError');
  });

  it("records the error's message and stack trace by default, only its type with includeErrorMessages: false", async () => {
    const failure = () => Promise.reject(new Error('connect ECONNREFUSED 10.0.0.7:5432 user=payments'));
    const recorded = new ResiliencePipelineBuilder({ name: 'db', telemetryListeners: [listener] }).build();
    await recorded.executeOutcome(failure);
    const redacting = new OpenTelemetryListener({ tracerProvider, metrics: false, includeErrorMessages: false });
    const redacted = new ResiliencePipelineBuilder({ name: 'db', telemetryListeners: [redacting] }).build();
    await redacted.executeOutcome(failure);
    await redacted.executeOutcome(() => Promise.reject('a string that names a host: 10.0.0.7'));

    const [withMessage, withoutMessage, stringFailure] = spans.getFinishedSpans();
    expect(withMessage.events[0].attributes).toMatchObject({
      'exception.type': 'Error',
      'exception.message': 'connect ECONNREFUSED 10.0.0.7:5432 user=payments',
      'exception.stacktrace': expect.stringContaining('10.0.0.7'),
    });
    for (const span of [withoutMessage, stringFailure]) {
      expect(span.events.map((e) => e.name)).toEqual(['exception']);
      expect(JSON.stringify([span.events, span.attributes, span.status])).not.toContain('10.0.0.7');
      expect(span.status.code).toBe(2);
    }
    expect(withoutMessage.events[0].attributes).toEqual({ 'exception.type': 'Error' });
    expect(stringFailure.attributes['exception.type']).toBe('string');
    expect(() => new OpenTelemetryListener({ includeErrorMessages: 'no' as never })).toThrow(ResilienceValidationError);
  });

  it('records hedges and timeouts as span events of the same span, also from parallel attempts', async () => {
    const hedged = new ResiliencePipelineBuilder<string>({ name: 'search', telemetryListeners: [listener] })
      .addTimeout(10_000)
      .addHedging({ delay: 0, maxHedgedAttempts: 1 })
      .build();
    await hedged.execute(({ attemptNumber, signal }) =>
      attemptNumber === 0
        ? new Promise<string>((_, reject) => signal.addEventListener('abort', () => reject(signal.reason)))
        : 'fast',
    );
    const [span] = spans.getFinishedSpans();
    expect(span.name).toBe('resilience search');
    expect(span.events.map((e) => e.name)).toEqual(expect.arrayContaining(['OnHedging', 'ExecutionAttempt']));

    spans.reset();
    const slow = new ResiliencePipelineBuilder({ name: 'slow', telemetryListeners: [listener] }).addTimeout(1).build();
    await slow.executeOutcome(
      ({ signal }) => new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason))),
    );
    const [timedOut] = spans.getFinishedSpans();
    expect(timedOut.events.map((e) => e.name)).toEqual(['OnTimeout', 'exception']);
    expect(timedOut.attributes['exception.type']).toBe('TimeoutRejectedError');
  });

  it("observes each circuit's state in a gauge once it knows the registry", async () => {
    const registry = new ResiliencePipelineRegistry({
      timeProvider: time,
      telemetryListeners: [listener],
      pipelines: { inventory: { circuitBreaker: { kind: 'consecutive', failureThreshold: 1 } } },
    });
    const detach = listener.attachRegistry(registry);
    await registry.getPipeline('inventory').executeOutcome(() => Promise.reject(new Error('x')));
    const gauge = points((await collect()).get(RESILIENCE_METRICS.circuitState));
    const values = Object.fromEntries(gauge.map((p) => [p.attributes['circuit.state'], p.value]));
    expect(values).toEqual({ closed: 0, open: 1, 'half-open': 0, isolated: 0 });
    expect(gauge[0].attributes).toMatchObject({
      'pipeline.name': 'inventory',
      'circuit.key': 'inventory/circuit-breaker',
    });
    detach();
    await registry.dispose();
  });
});

describe('OpenTelemetryListener without an SDK', () => {
  it('is a no-op: calls run and nothing is recorded', async () => {
    const pipeline = new ResiliencePipelineBuilder({ name: 'plain', telemetryListeners: [new OpenTelemetryListener()] })
      .addRetry({ maxRetryAttempts: 1, delay: 0 })
      .build();
    let calls = 0;
    const ctx = new ResilienceContext();
    let active: unknown = 'unset';
    const run = () => {
      active = trace.getActiveSpan();
      return ++calls < 2 ? Promise.reject(new Error('x')) : 'ok';
    };
    await expect(pipeline.execute(run, ctx)).resolves.toBe('ok');
    expect(active).toBeUndefined();
    expect(ctx.hasProperties).toBe(false); // no span was kept
    expect(calls).toBe(2);
  });
});

/** Starts a span per incoming request, as an HTTP instrumentation would. */
@Injectable()
class RequestSpanMiddleware implements NestMiddleware {
  use(req: { method: string; originalUrl: string }, _res: unknown, next: () => void): void {
    const span = tracer.startSpan(`${req.method} ${req.originalUrl}`);
    context.with(trace.setSpan(context.active(), span), () => {
      (_res as { on(e: string, l: () => void): void }).on('finish', () => span.end());
      next();
    });
  }
}

@Controller('orders')
class OrdersController {
  constructor(private readonly registry: ResiliencePipelineRegistry) {}

  @Get()
  list(): Promise<string> {
    return this.registry.getPipeline<string>('orders').execute(() => {
      const span = tracer.startSpan('db.query');
      span.end();
      return 'ok';
    });
  }
}

@Module({
  imports: [
    ResilienceModule.forRoot({
      logging: false,
      telemetryListeners: [new OpenTelemetryListener({ meterProvider, tracerProvider })],
      pipelines: {
        orders: { retry: { maxRetryAttempts: 1, delay: 0 } },
        inventory: { circuitBreaker: { kind: 'consecutive', failureThreshold: 1 } },
      },
    }),
  ],
  controllers: [OrdersController],
  providers: [RequestSpanMiddleware],
})
class TracedAppModule {
  configure(consumer: { apply(m: unknown): { forRoutes(...r: string[]): void } }): void {
    consumer.apply(RequestSpanMiddleware).forRoutes('*');
  }
}

describe('OpenTelemetryListener in a Nest app', () => {
  let app: INestApplication<App>;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({ imports: [TracedAppModule] }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
  });

  afterAll(async () => {
    await app.close();
  });

  it("parents the pipeline's span under the incoming request's span, and the callback's spans under it", async () => {
    spans.reset();
    await request(app.getHttpServer()).get('/orders').expect(200, 'ok');
    const finished = spans.getFinishedSpans();
    const http = finished.find((s) => s.name === 'GET /orders')!;
    const pipeline = finished.find((s) => s.name === 'resilience orders')!;
    const query = finished.find((s) => s.name === 'db.query')!;
    expect(pipeline.parentSpanContext?.spanId).toBe(http.spanContext().spanId);
    expect(query.parentSpanContext?.spanId).toBe(pipeline.spanContext().spanId);
    expect(new Set(finished.map((s) => s.spanContext().traceId)).size).toBe(1);
  });

  it('observes the circuits of the module registry (the module attaches it)', async () => {
    await app
      .get(ResiliencePipelineRegistry)
      .getPipeline('inventory')
      .execute(() => 'ok');
    const gauge = points((await collect()).get(RESILIENCE_METRICS.circuitState));
    const inventory = gauge.filter((p) => p.attributes['pipeline.name'] === 'inventory');
    expect(Object.fromEntries(inventory.map((p) => [p.attributes['circuit.state'], p.value]))).toEqual({
      closed: 1,
      open: 0,
      'half-open': 0,
      isolated: 0,
    });
    // The orders pipeline has no breaker: no point for it.
    expect(gauge.filter((p) => p.attributes['pipeline.name'] === 'orders')).toEqual([]);
  });
});

describe("OpenTelemetryListener's producer mode", () => {
  it('exports the same instruments, tags and data as the instrument mode, through the reader it is given to', async () => {
    const instrumentsExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
    const instrumentsReader = new PeriodicExportingMetricReader({
      exporter: instrumentsExporter,
      exportIntervalMillis: 3_600_000,
    });
    const instrumentsProvider = new MeterProvider({ readers: [instrumentsReader] });
    const viaInstruments = new OpenTelemetryListener({ meterProvider: instrumentsProvider, traces: false });

    const viaProducer = new OpenTelemetryListener({ metricsExport: 'producer', traces: false });
    const producerExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
    const producerReader = new PeriodicExportingMetricReader({
      exporter: producerExporter,
      exportIntervalMillis: 3_600_000,
      metricProducers: [viaProducer.metricProducer],
    });
    const producerProvider = new MeterProvider({ readers: [producerReader] });

    const time = new FakeTimeProvider(0);
    const run = async (listener: OpenTelemetryListener) => {
      const registry = new ResiliencePipelineRegistry({
        timeProvider: time,
        telemetryListeners: [listener],
        pipelines: {
          orders: {
            retry: { maxRetryAttempts: 2, delay: 0 },
            circuitBreaker: { kind: 'consecutive', failureThreshold: 4 },
          },
        },
      });
      listener.attachRegistry(registry);
      for (let i = 0; i < 6; i++) {
        let calls = 0;
        await registry.getPipeline('orders', i % 2 ? 'eu' : undefined).executeOutcome(
          () => {
            time.advance(i * 7);
            return ++calls <= i % 3 ? Promise.reject(new TypeError('flaky')) : 'ok';
          },
          { operationKey: `op-${i % 2}` },
        );
      }
      return registry;
    };
    const registries = [await run(viaInstruments), await run(viaProducer)];

    type Normalised = Record<string, { unit: string; type: DataPointType; points: string[] }>;
    const normalise = async (
      reader: PeriodicExportingMetricReader,
      exporter: InMemoryMetricExporter,
    ): Promise<Normalised> => {
      exporter.reset();
      await reader.forceFlush();
      const metrics = exporter.getMetrics().flatMap((r) => r.scopeMetrics.flatMap((s) => s.metrics));
      return Object.fromEntries(
        metrics
          .map((m): [string, Normalised[string]] => [
            m.descriptor.name,
            {
              unit: m.descriptor.unit,
              type: m.dataPointType,
              points: (m.dataPoints as DataPoint<unknown>[])
                .map((p) => {
                  const v = p.value as Histogram | number;
                  const value =
                    typeof v === 'number' ? v : { count: v.count, sum: v.sum, counts: v.buckets.counts, max: v.max };
                  return JSON.stringify([Object.entries(p.attributes).sort(), value]);
                })
                .sort(),
            },
          ])
          .sort(),
      );
    };
    const fromInstruments = await normalise(instrumentsReader, instrumentsExporter);
    const fromProducer = await normalise(producerReader, producerExporter);
    expect(Object.keys(fromProducer)).toEqual([
      RESILIENCE_METRICS.circuitState,
      RESILIENCE_METRICS.pipelineDuration,
      RESILIENCE_METRICS.attemptDuration,
      RESILIENCE_METRICS.strategyEvents,
    ]);
    expect(fromProducer).toEqual(fromInstruments);
    expect(fromProducer[RESILIENCE_METRICS.strategyEvents].points.length).toBeGreaterThan(1);
    // Unnamed strategies are tagged with their kind.
    expect(fromProducer[RESILIENCE_METRICS.strategyEvents].points.join()).toContain('["strategy.name","retry"]');

    await Promise.all(registries.map((r) => r.dispose()));
    await instrumentsProvider.shutdown();
    await producerProvider.shutdown();
  });
});

describe("OpenTelemetryListener's producer mode with unbounded tags", () => {
  it('keeps at most 2 000 series, whatever the operation keys', async () => {
    // The operation-key cap is lifted, so the series cap is the one that applies.
    const listener = new OpenTelemetryListener({
      metricsExport: 'producer',
      traces: false,
      maxOperationKeys: Infinity,
    });
    const pipeline = new ResiliencePipelineBuilder({ name: 'keys', telemetryListeners: [listener] }).build();
    for (let i = 0; i < 2_100; i++) await pipeline.execute(() => 'ok', { operationKey: `user-${i}` });
    const { resourceMetrics } = await listener.metricProducer.collect();
    const metrics = resourceMetrics.scopeMetrics[0].metrics as unknown as MetricData[];
    const durations = metrics.find((m) => m.descriptor.name === RESILIENCE_METRICS.pipelineDuration)!;
    expect(durations.dataPoints).toHaveLength(2_000);
    expect(durations.dataPoints[0].attributes).toEqual({ 'pipeline.name': 'keys', 'operation.key': 'user-0' });
  });
});

describe("OpenTelemetryListener's cap on operation keys", () => {
  const keysOf = (metric: MetricData | undefined): string[] =>
    [...new Set(points(metric).map((p) => String(p.attributes['operation.key'])))].sort();

  it('records new keys beyond maxOperationKeys as "(other)", keeps the admitted ones, and warns once', async () => {
    const warnings: string[] = [];
    const logger = { warn: (message: string) => void warnings.push(message) };
    const ownExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
    const ownReader = new PeriodicExportingMetricReader({ exporter: ownExporter, exportIntervalMillis: 3_600_000 });
    const provider = new MeterProvider({ readers: [ownReader] });
    const ownSpans = new InMemorySpanExporter();
    const ownTracers = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(ownSpans)] });
    const instruments = new OpenTelemetryListener({
      meterProvider: provider,
      tracerProvider: ownTracers,
      maxOperationKeys: 3,
      logger,
    });
    const producer = new OpenTelemetryListener({ metricsExport: 'producer', traces: false, maxOperationKeys: 3 });
    const pipeline = new ResiliencePipelineBuilder({ name: 'capped', telemetryListeners: [instruments, producer] })
      .addRetry({ maxRetryAttempts: 1, delay: 0 })
      .build();
    let calls = 0;
    for (const key of ['a', 'b', 'c', 'd', 'e', 'a', 'f', 'c']) {
      // Every third attempt fails, so retries and attempts are recorded too.
      await pipeline.execute(
        () => {
          if (calls++ % 3 === 0) throw new Error('transient');
          return 'ok';
        },
        { operationKey: key },
      );
    }

    ownExporter.reset();
    await ownReader.forceFlush();
    const byName = new Map(
      ownExporter
        .getMetrics()
        .flatMap((r) => r.scopeMetrics.flatMap((s) => s.metrics.map((m) => [m.descriptor.name, m]))),
    );
    const expected = ['(other)', 'a', 'b', 'c'];
    expect(keysOf(byName.get(RESILIENCE_METRICS.pipelineDuration))).toEqual(expected);
    expect(keysOf(byName.get(RESILIENCE_METRICS.attemptDuration))).toEqual(expected);
    expect(keysOf(byName.get(RESILIENCE_METRICS.strategyEvents)).every((k) => expected.includes(k))).toBe(true);
    expect(ownSpans.getFinishedSpans().map((span) => span.attributes['operation.key'])).toEqual([
      'a',
      'b',
      'c',
      '(other)',
      '(other)',
      'a',
      '(other)',
      'c',
    ]);

    const produced = (await producer.metricProducer.collect()).resourceMetrics.scopeMetrics[0]
      .metrics as unknown as MetricData[];
    const local = new Map(produced.map((m) => [m.descriptor.name, m]));
    expect(keysOf(local.get(RESILIENCE_METRICS.pipelineDuration))).toEqual(expected);
    expect(keysOf(local.get(RESILIENCE_METRICS.attemptDuration))).toEqual(expected);

    expect(warnings).toEqual([
      'OpenTelemetryListener: more than 3 distinct operation keys (maxOperationKeys); further new keys are recorded as operation.key="(other)"',
    ]);
    await provider.shutdown();
    await ownTracers.shutdown();
  });

  it('admits 100 keys by default', async () => {
    const listener = new OpenTelemetryListener({ metricsExport: 'producer', traces: false, logger: { warn: () => 0 } });
    const pipeline = new ResiliencePipelineBuilder({ name: 'keys', telemetryListeners: [listener] }).build();
    for (let i = 0; i < 150; i++) await pipeline.execute(() => 'ok', { operationKey: `user-${i}` });
    const metrics = (await listener.metricProducer.collect()).resourceMetrics.scopeMetrics[0]
      .metrics as unknown as MetricData[];
    const keys = keysOf(metrics.find((m) => m.descriptor.name === RESILIENCE_METRICS.pipelineDuration));
    expect(keys).toHaveLength(101);
    expect(keys).toContain('(other)');
    expect(keys).not.toContain('user-100');
  });

  it('refuses a cap that is not a whole number >= 1, and a logger without warn', () => {
    expect(() => new OpenTelemetryListener({ maxOperationKeys: 0 })).toThrow(ResilienceValidationError);
    expect(() => new OpenTelemetryListener({ maxOperationKeys: 2.5 })).toThrow(/maxOperationKeys/);
    expect(() => new OpenTelemetryListener({ logger: {} as never })).toThrow(/logger/);
    expect(() => new OpenTelemetryListener({ maxOperationKeys: Infinity })).not.toThrow();
  });
});

describe("OpenTelemetryListener's producer mode, property", () => {
  it('aggregates any durations into the same histogram as the SDK (count, sum, min, max, buckets)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.oneof(fc.integer({ min: 0, max: 12_000 }), fc.constantFrom(0, 5, 10, 25, 1_000, 10_000)), {
          minLength: 1,
          maxLength: 40,
        }),
        async (durations) => {
          const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
          const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
          const provider = new MeterProvider({ readers: [reader] });
          const sdk = new OpenTelemetryListener({ meterProvider: provider, traces: false });
          const local = new OpenTelemetryListener({ metricsExport: 'producer', traces: false });
          const time = new FakeTimeProvider(0);
          for (const listener of [sdk, local]) {
            const pipeline = new ResiliencePipelineBuilder({
              name: 'p',
              timeProvider: time,
              telemetryListeners: [listener],
            })
              .addRetry({ maxRetryAttempts: 0 })
              .build();
            for (const d of durations) await pipeline.execute(() => void time.advance(d));
          }
          await reader.forceFlush();
          const fromSdk = exporter
            .getMetrics()
            .flatMap((r) => r.scopeMetrics.flatMap((m) => m.metrics))
            .find((m) => m.descriptor.name === RESILIENCE_METRICS.pipelineDuration)!.dataPoints[0].value as Histogram;
          const produced = (await local.metricProducer.collect()).resourceMetrics.scopeMetrics[0]
            .metrics as unknown as MetricData[];
          const fromLocal = produced.find((m) => m.descriptor.name === RESILIENCE_METRICS.pipelineDuration)!
            .dataPoints[0].value as Histogram;
          await provider.shutdown();
          expect(fromLocal).toEqual(fromSdk);
        },
      ),
      { numRuns: 40 },
    );
  });
});
