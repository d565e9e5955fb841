import { describe, expect, it } from '@jest/globals';
import {
  INVALID_SPAN_CONTEXT,
  trace,
  type Attributes,
  type Histogram,
  type Meter,
  type MeterProvider,
  type SpanOptions,
  type Tracer,
  type TracerProvider,
} from '@opentelemetry/api';
import { ResilienceContext, ResiliencePipelineBuilder } from '../../src/index.js';
import { OpenTelemetryListener } from '../../src/opentelemetry/index.js';
import { FakeTimeProvider } from '../../src/testing/index.js';

/** A meter provider that keeps every measurement (value and the attributes object it was given). */
function recordingMeterProvider(): { provider: MeterProvider; records: [string, number, Attributes][] } {
  const records: [string, number, Attributes][] = [];
  const instrument = (name: string) =>
    ({
      record: (value: number, attributes: Attributes) => void records.push([name, value, attributes]),
      add: (value: number, attributes: Attributes) => void records.push([name, value, attributes]),
    }) as unknown as Histogram;
  const meter = {
    createCounter: instrument,
    createHistogram: instrument,
    createObservableGauge: () => ({}),
    addBatchObservableCallback: () => undefined,
  } as unknown as Meter;
  return { provider: { getMeter: () => meter }, records };
}

describe('OpenTelemetryListener interest and attribute sets', () => {
  it('wants PipelineExecuting only to start spans', () => {
    const metricsOnly = new OpenTelemetryListener({ meterProvider: recordingMeterProvider().provider, traces: false });
    expect(metricsOnly.wants('PipelineExecuting')).toBe(false);
    expect(metricsOnly.wants('PipelineExecuted')).toBe(true);
    expect(metricsOnly.wants('ExecutionAttempt')).toBe(true);
    expect(metricsOnly.wants('OnRetry')).toBe(true);
    const nothing = new OpenTelemetryListener({ metrics: false, traces: false });
    expect(nothing.wants('PipelineExecuted')).toBe(false);
    expect(new OpenTelemetryListener({ metrics: false }).wants('PipelineExecuting')).toBe(true);
  });

  it('records sub-millisecond durations with one reused attribute object per series', async () => {
    const time = new FakeTimeProvider();
    const { provider, records } = recordingMeterProvider();
    const listener = new OpenTelemetryListener({ meterProvider: provider, traces: false });
    const pipeline = new ResiliencePipelineBuilder({
      name: 'orders',
      timeProvider: time,
      telemetryListeners: [listener],
    })
      .addRetry({ maxRetryAttempts: 1, delay: 0 })
      .build();
    const call = async () => {
      time.advance(0.25);
      return 1;
    };
    await pipeline.execute(call, { operationKey: 'get' });
    await pipeline.execute(call, { operationKey: 'get' });
    const attempts = records.filter(([name]) => name.endsWith('attempt.duration'));
    const pipelines = records.filter(([name]) => name.endsWith('pipeline.duration'));
    expect(attempts.map(([, value]) => value)).toEqual([0.25, 0.25]);
    expect(pipelines.map(([, value]) => value)).toEqual([0.25, 0.25]);
    expect(attempts[1][2]).toBe(attempts[0][2]);
    expect(pipelines[1][2]).toBe(pipelines[0][2]);
    expect(attempts[0][2]).toEqual({
      'pipeline.name': 'orders',
      'operation.key': 'get',
      'strategy.name': 'retry',
      'event.name': 'ExecutionAttempt',
      'event.severity': 'Information',
      'attempt.number': 0,
      'attempt.handled': false,
    });
    await expect(
      pipeline.execute(
        async () => {
          throw new TypeError('bad');
        },
        { operationKey: 'get' },
      ),
    ).rejects.toThrow('bad');
    const failed = records.filter(([name]) => name.endsWith('pipeline.duration')).at(-1)![2];
    expect(failed).toEqual({ 'pipeline.name': 'orders', 'operation.key': 'get', 'exception.type': 'TypeError' });
  });

  it('starts every span of a series with the same name and options, and keeps nothing of a dropped span', async () => {
    // A tracer whose sampler drops every span, as an AlwaysOffSampler does: non-recording spans.
    const started: [string, SpanOptions | undefined][] = [];
    const tracer = {
      startSpan: (name: string, options?: SpanOptions) => {
        started.push([name, options]);
        return trace.wrapSpanContext(INVALID_SPAN_CONTEXT);
      },
    } as unknown as Tracer;
    const tracerProvider: TracerProvider = { getTracer: () => tracer };
    const listener = new OpenTelemetryListener({ metrics: false, tracerProvider });
    const pipeline = new ResiliencePipelineBuilder({ name: 'orders', telemetryListeners: [listener] })
      .addRetry()
      .build();
    const context = new ResilienceContext({ operationKey: 'get' });
    const callback = () => 'ok';

    await pipeline.execute(callback, context);
    await pipeline.execute(callback, { operationKey: 'get' });

    expect(started.map(([name]) => name)).toEqual(['resilience orders', 'resilience orders']);
    expect(started[1][1]).toBe(started[0][1]);
    expect(started[0][1]?.attributes).toEqual({ 'pipeline.name': 'orders', 'operation.key': 'get' });
    expect(context.hasProperties).toBe(false);
  });
});
