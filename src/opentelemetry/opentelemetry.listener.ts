import {
  context as otelContext,
  createNoopMeter,
  diag,
  metrics,
  SpanKind,
  SpanStatusCode,
  trace,
  ValueType,
  type Attributes,
  type BatchObservableResult,
  type Context,
  type Counter,
  type Histogram,
  type Meter,
  type MeterProvider,
  type ObservableGauge,
  type Span,
  type SpanOptions,
  type Tracer,
  type TracerProvider,
} from '@opentelemetry/api';
import {
  describeResilienceEvent,
  OptionsValidator,
  ResiliencePropertyKey,
  systemTimeProvider,
  type CircuitState,
  type ResilienceContext,
  type ResilienceEvent,
  type ResilienceEventMap,
  type ResilienceEventSeverity,
  type TelemetryListener,
} from '../core/index.js';
import { type ResiliencePipelineRegistry } from '../config/index.js';
import { errorType } from '../core/internal.js';
import { LocalMetrics, SeriesCache, type ProducedMetric } from './local-metrics.aggregator.js';

/** Instrument names, as Polly v8 (`Polly.Extensions`) reports them. @publicApi */
export const RESILIENCE_METRICS = {
  strategyEvents: 'resilience.polly.strategy.events',
  attemptDuration: 'resilience.polly.strategy.attempt.duration',
  pipelineDuration: 'resilience.polly.pipeline.duration',
  /** Not in Polly: 1 for each circuit's current state, 0 for the others (as resilience4j does). */
  circuitState: 'resilience.circuit_breaker.state',
} as const;

/** Options of `OpenTelemetryListener`: the meter and tracer providers, and what it records. @publicApi */
export interface OpenTelemetryListenerOptions {
  /**
   * Default: the global meter provider. The listener may be created before the SDK registers one (the
   * usual ESM order: `app.module.ts` is evaluated before `sdk.start()`): it looks the provider up when
   * the module starts (`attachRegistry`) and on its first events, and until one is registered again at
   * most once per second; once found, the instruments are kept.
   */
  meterProvider?: MeterProvider;
  /** Default: the global tracer provider (a proxy: spans are recorded from when an SDK registers one). */
  tracerProvider?: TracerProvider;
  /** Record metrics. Default true. */
  metrics?: boolean;
  /** Record a span per pipeline execution. Default true. */
  traces?: boolean;
  /** The meter's and tracer's name. Default `nest-resilience`. */
  name?: string;
  /**
   * How metrics reach the SDK. `instruments` (default): through the API's instruments of the meter
   * provider — nothing to wire, but the SDK sorts and serialises the tags of every measurement (0.5–2 µs
   * each on a small VM, more than a whole pipeline).
   * `producer`: aggregated in this process and handed over at collection time by `metricProducer`, which
   * you give your reader (`new PeriodicExportingMetricReader({ exporter, metricProducers: [listener.metricProducer] })`);
   * a measurement then costs a map lookup. Same names, tags and (cumulative) data either way.
   */
  metricsExport?: 'instruments' | 'producer';
  /** `producer` mode: the histograms' bucket boundaries, in ms. Default: the SDK's defaults. */
  histogramBoundaries?: readonly number[];
  /**
   * At most this many distinct `operation.key` values (metric tags and span attributes); every further
   * new key is recorded as `"(other)"` (`OPERATION_KEY_OVERFLOW`), and a warning naming the cap is
   * written once. Keys seen before the cap was reached keep their own value. Default 100; `Infinity`
   * turns the cap off.
   */
  maxOperationKeys?: number;
  /**
   * Where the one-time warning about the operation-key cap goes. Default: OpenTelemetry's diagnostic
   * logger (`diag`, silent until your SDK set-up calls `diag.setLogger`). In a Nest app, e.g.
   * `new Logger('OpenTelemetry')`.
   */
  logger?: OperationKeyCapLogger;
  /**
   * Whether a failed execution's span records the error's message and stack trace (OpenTelemetry's
   * `exception.message` and `exception.stacktrace`). Default true, as OpenTelemetry's conventions have
   * it; messages may carry hosts, credentials or tokens, so `false` records only the error's type
   * (`exception.type`), as the module's logger does by default (`logging.includeErrorMessages`).
   */
  includeErrorMessages?: boolean;
}

/** Where `OpenTelemetryListener` writes its one-time warning about the operation-key cap. @publicApi */
export interface OperationKeyCapLogger {
  /** Writes one warning line. */
  warn(message: string): unknown;
}

/** The `operation.key` recorded for new keys beyond `maxOperationKeys`. @publicApi */
export const OPERATION_KEY_OVERFLOW = '(other)';

/** The default of `maxOperationKeys`. @publicApi */
export const DEFAULT_MAX_OPERATION_KEYS = 100;

/**
 * What `metricProducer` gives a `MetricReader` of `@opentelemetry/sdk-metrics` (its `MetricProducer`);
 * the SDK keeps its own resource.
 *
 * @publicApi
 */
export interface ResilienceMetricProducer {
  /** Hands the aggregated metrics to the reader (the OpenTelemetry `MetricProducer` contract). */
  collect(options?: { timeoutMillis?: number }): Promise<{
    resourceMetrics: { resource: never; scopeMetrics: { scope: { name: string }; metrics: never[] }[] };
    errors: unknown[];
  }>;
}

const SEVERITY: Record<ResilienceEventSeverity, string> = {
  debug: 'Debug',
  information: 'Information',
  warning: 'Warning',
  error: 'Error',
  critical: 'Critical',
};

const CIRCUIT_STATES: readonly CircuitState[] = ['closed', 'open', 'half-open', 'isolated'];

/** The event named `K`. */
type EventOf<K extends ResilienceEvent['eventName']> = Extract<ResilienceEvent, { eventName: K }>;

/** What starts a pipeline's span: its name and options, the same objects for every call of a series. */
interface SpanStart {
  readonly name: string;
  readonly options: SpanOptions;
}

interface SpanFrame {
  readonly span: Span;
  readonly parent: SpanFrame | undefined;
}

/** Each recorded pipeline span's frame, so a callback wrapper can tell that a nested pipeline's span is active. */
const FRAMES = new WeakMap<Span, SpanFrame>();

/** True when `span` is `frame`'s span or the span of a pipeline nested in it. */
function isWithin(span: Span | undefined, frame: SpanFrame): boolean {
  for (let f = span && FRAMES.get(span); f !== undefined; f = f.parent) if (f === frame) return true;
  return false;
}

/** The instruments of the meter the listener records to. */
interface Instruments {
  readonly meter: Meter;
  readonly events: Counter;
  readonly attemptDuration: Histogram;
  readonly pipelineDuration: Histogram;
}

/** While no global meter provider is registered, how often (ms) events look for one again, at most. */
const METER_LOOKUP_INTERVAL = 1_000;

/** Where a pipeline execution keeps its span; forked contexts (hedged attempts) carry it too. */
const SPAN_FRAME = new ResiliencePropertyKey<SpanFrame>('nest-resilience.opentelemetry.span');

/**
 * Turns resilience events into OpenTelemetry metrics and traces through `@opentelemetry/api`:
 *
 * - metrics under Polly's names and tags (`resilience.polly.strategy.events`,
 *   `resilience.polly.strategy.attempt.duration`, `resilience.polly.pipeline.duration`; tags
 *   `pipeline.name`, `pipeline.instance`, `strategy.name`, `operation.key`, `event.name`,
 *   `event.severity`, `exception.type`, `attempt.number`, `attempt.handled`), plus a gauge of each
 *   circuit's state once `attachRegistry` is called (the Nest module does); at most `maxOperationKeys`
 *   distinct `operation.key` values (default 100), further new keys become `"(other)"`;
 * - a span per pipeline execution, child of the active span, active itself while the callback runs, with
 *   a span event per attempt, retry, hedge, rejection, timeout and circuit state change, and the
 *   failure recorded as an exception.
 *
 * Without an OpenTelemetry SDK every call is a no-op. The listener may be created before the SDK is
 * started: without a `meterProvider` option it binds to the global meter provider once one is registered
 * (it looks when the Nest module attaches its registry, then on events at most once per second until it
 * finds one); spans go through the global tracer provider, a proxy, from when the SDK registers it.
 *
 * @publicApi
 */
export class OpenTelemetryListener implements TelemetryListener {
  /** Set once a meter is known: at construction with `meterProvider`, else once the SDK registers one. */
  private instruments: Instruments | undefined;
  /** Metrics through the global meter provider, none registered yet: look it up later. */
  private awaitingMeter = false;
  /** While `awaitingMeter`: when (on the system clock) an event may look the global provider up again. */
  private nextMeterLookup = 0;
  private readonly tracer: Tracer | undefined;
  private gauge: ObservableGauge | undefined;
  private readonly registries = new Set<ResiliencePipelineRegistry>();
  private readonly local: LocalMetrics | undefined;
  private readonly scopeName: string;
  /** The operation keys recorded under their own value (at most `maxOperationKeys`). */
  private readonly operationKeys = new Set<string>();
  private readonly maxOperationKeys: number;
  private readonly logger: OperationKeyCapLogger;
  private overflowed = false;
  /** Spans record the error's message and stack trace (`includeErrorMessages`). */
  private readonly includeErrorMessages: boolean;
  /** Metrics are recorded (through instruments or locally). */
  private readonly recordsMetrics: boolean;
  /**
   * The tags of each series, built once and reused for every measurement (the SDK keeps the object it is
   * given; nothing mutates them): by source, then operation key, exception type and the event's values.
   */
  private readonly pipelineSets = new SeriesCache<Attributes>();
  private readonly attemptSets = new SeriesCache<Attributes>();
  private readonly eventSets = new SeriesCache<Attributes>();
  /** The span's name and options (kind, tags) of each series, built once: a dropped span allocates nothing here. */
  private readonly spanStarts = new SeriesCache<SpanStart>();
  /** `metricsExport: 'producer'`: give it to your `MetricReader` (`metricProducers: [...]`). */
  readonly metricProducer: ResilienceMetricProducer;

  constructor(options: OpenTelemetryListenerOptions = {}) {
    const v = new OptionsValidator('OpenTelemetryListener');
    v.number('maxOperationKeys', options.maxOperationKeys, { min: 1, integer: true, allowInfinity: true });
    if (options.logger !== undefined && typeof options.logger?.warn !== 'function') {
      v.add('logger', options.logger, 'must have a warn(message) method');
    }
    v.boolean('includeErrorMessages', options.includeErrorMessages);
    v.throwIfInvalid('Invalid OpenTelemetry listener options');
    this.includeErrorMessages = options.includeErrorMessages ?? true;
    this.maxOperationKeys = options.maxOperationKeys ?? DEFAULT_MAX_OPERATION_KEYS;
    this.logger = options.logger ?? diag;
    const name = options.name ?? 'nest-resilience';
    this.scopeName = name;
    this.metricProducer = { collect: () => this.produce() as never };
    if (options.metrics !== false && options.metricsExport === 'producer') {
      this.local = new LocalMetrics(options.histogramBoundaries);
    } else if (options.metrics !== false) {
      // An explicit provider wins; the global one may not be registered yet (the SDK starts after imports).
      if (options.meterProvider) this.bind(options.meterProvider.getMeter(name));
      else this.awaitingMeter = this.lookUpGlobalMeter() === undefined;
    }
    this.recordsMetrics = options.metrics !== false;
    if (options.traces !== false) this.tracer = (options.tracerProvider ?? trace.getTracerProvider()).getTracer(name);
  }

  /**
   * The events this listener records: `PipelineExecuting` only to start spans (with traces on), every
   * other event when metrics or traces are on. Asked once per strategy and event when a pipeline is built.
   */
  wants(eventName: keyof ResilienceEventMap): boolean {
    if (eventName === 'PipelineExecuting') return this.tracer !== undefined;
    return this.recordsMetrics || this.tracer !== undefined;
  }

  /** Creates the instruments on `meter`, and the circuit gauge if a registry is attached already. */
  private bind(meter: Meter): Instruments {
    const instruments: Instruments = {
      meter,
      events: meter.createCounter(RESILIENCE_METRICS.strategyEvents, {
        unit: '{event}',
        description: 'Emitted upon the occurrence of a resilience event.',
      }),
      attemptDuration: meter.createHistogram(RESILIENCE_METRICS.attemptDuration, {
        unit: 'ms',
        description: 'Tracks the duration of execution attempts, produced by Retry and Hedging resilience strategies.',
      }),
      pipelineDuration: meter.createHistogram(RESILIENCE_METRICS.pipelineDuration, {
        unit: 'ms',
        description: 'Measures the duration of resilience pipelines.',
      }),
    };
    this.instruments = instruments;
    if (this.registries.size > 0) this.observeCircuitsOn(meter);
    return instruments;
  }

  /** Binds to the global meter provider if an SDK has registered one (anything but the API's no-op). */
  private lookUpGlobalMeter(): Instruments | undefined {
    const meter = metrics.getMeter(this.scopeName);
    if (meter === createNoopMeter()) return undefined;
    this.awaitingMeter = false;
    return this.bind(meter);
  }

  /**
   * The instruments, looking the global provider up again if none was registered when last looked at —
   * at most once per `METER_LOOKUP_INTERVAL`, so an app without an SDK pays one clock read per event.
   * Once bound, callers read the `instruments` field only (`this.instruments ?? this.meterLookup()`).
   */
  private meterLookup(): Instruments | undefined {
    if (!this.awaitingMeter) return undefined;
    const now = systemTimeProvider.now();
    if (now < this.nextMeterLookup) return undefined;
    this.nextMeterLookup = now + METER_LOOKUP_INTERVAL;
    return this.lookUpGlobalMeter();
  }

  private observeCircuitsOn(meter: Meter): void {
    if (this.gauge) return;
    const gauge = meter.createObservableGauge(RESILIENCE_METRICS.circuitState, {
      description: "1 for each circuit's current state, 0 for its other states.",
    });
    this.gauge = gauge;
    meter.addBatchObservableCallback((result) => this.observeCircuits(result, gauge), [gauge]);
  }

  /**
   * Observes the circuits of `registry` in the `resilience.circuit_breaker.state` gauge. Returns a
   * function that stops observing it.
   */
  attachRegistry(registry: ResiliencePipelineRegistry): () => void {
    if (this.local) {
      this.registries.add(registry);
      return () => this.registries.delete(registry);
    }
    // The module attaches its registry as the app starts, usually after the SDK: look for its provider now.
    const instruments = this.instruments ?? (this.awaitingMeter ? this.lookUpGlobalMeter() : undefined);
    if (!instruments && !this.awaitingMeter) return () => undefined;
    this.registries.add(registry);
    // Else `bind` creates the gauge once the SDK's provider is found.
    if (instruments) this.observeCircuitsOn(instruments.meter);
    return () => this.registries.delete(registry);
  }

  write(event: ResilienceEvent): void {
    switch (event.eventName) {
      case 'ExecutionAttempt':
        this.writeAttempt(event);
        return;
      case 'PipelineExecuted':
        this.writeExecuted(event);
        return;
      case 'PipelineExecuting':
        this.startSpan(event);
        return;
      default:
        this.writeEvent(event);
    }
  }

  private writeExecuted(event: EventOf<'PipelineExecuted'>): void {
    const { outcome, duration } = event.arguments;
    const local = this.local;
    const histogram = local ? undefined : (this.instruments ?? this.meterLookup())?.pipelineDuration;
    if (local || histogram) {
      const failure = outcome.ok ? undefined : errorType(outcome.error);
      const op = this.operationKeyOf(event.context);
      if (local) local.pipeline(event.source, op, failure, this.pipelineTags, event, duration);
      else
        histogram!.record(duration, this.pipelineSets.get(event.source, op, failure, 0, 0, this.pipelineTags, event));
    }
    this.endSpan(event.context, outcome.ok ? undefined : outcome.error);
  }

  private writeAttempt(event: EventOf<'ExecutionAttempt'>): void {
    const { outcome, attemptNumber, handled, duration } = event.arguments;
    const local = this.local;
    const histogram = local ? undefined : (this.instruments ?? this.meterLookup())?.attemptDuration;
    const span = this.spanOf(event.context);
    if (!local && !histogram && !span) return;
    const failure = outcome.ok ? undefined : errorType(outcome.error);
    const op = this.operationKeyOf(event.context);
    // The severity follows `handled`, so (operation, exception, attempt, handled) identify the series.
    if (local) local.attempt(event.source, op, failure, attemptNumber, handled, this.attemptTags, event, duration);
    if (!histogram && !span) return;
    const attributes = this.attemptSets.get(event.source, op, failure, attemptNumber, handled, this.attemptTags, event);
    histogram?.record(duration, attributes);
    if (span) span.addEvent('ExecutionAttempt', { ...attributes, 'attempt.duration': duration });
  }

  private writeEvent(event: ResilienceEvent): void {
    const local = this.local;
    const counter = local ? undefined : (this.instruments ?? this.meterLookup())?.events;
    const span = this.spanOf(event.context);
    if (!local && !counter && !span) return;
    const outcome = (event.arguments as { outcome?: { ok: boolean; error?: unknown } }).outcome;
    const failure = outcome && !outcome.ok ? errorType(outcome.error) : undefined;
    const op = this.operationKeyOf(event.context);
    if (local) local.count(event.source, event.eventName, event.severity, op, failure, this.eventTags, event);
    if (!counter && !span) return;
    const attributes = this.eventSets.get(
      event.source,
      event.eventName,
      event.severity,
      op,
      failure,
      this.eventTags,
      event,
    );
    counter?.add(1, attributes);
    if (span) span.addEvent(event.eventName, { ...attributes, ...eventAttributes(event) });
  }

  private startSpan(event: ResilienceEvent): void {
    const tracer = this.tracer;
    if (!tracer) return;
    const ctx = event.context;
    // A pipeline nested in another (`addPipeline`) runs before the outer one's callback, where the outer
    // span is not active yet: its span is made a child of the enclosing pipeline's span explicitly.
    const enclosing = ctx.hasProperties ? ctx.properties.get(SPAN_FRAME) : undefined;
    const active = enclosing ? trace.setSpan(otelContext.active(), enclosing.span) : otelContext.active();
    // The sampler sees the tags (built once per series); a span it drops ends the listener's work for the call.
    const op = this.operationKeyOf(ctx);
    const start = this.spanStarts.get(event.source, op, undefined, 0, 0, this.spanStart, event);
    const span = tracer.startSpan(start.name, start.options, active);
    if (!span.isRecording()) return;
    const frame: SpanFrame = { span, parent: enclosing };
    FRAMES.set(span, frame);
    ctx.properties.set(SPAN_FRAME, frame);
    // The callback runs inside the span, so what it traces (HTTP clients, databases) nests under it. A
    // nested pipeline's wrapper runs first and makes its own span active: this one then leaves it.
    const spanContext: Context = trace.setSpan(active, span);
    ctx.wrapCallback((run) => (isWithin(trace.getActiveSpan(), frame) ? run() : otelContext.with(spanContext, run)));
  }

  private endSpan(ctx: ResilienceContext, error: unknown): void {
    if (!this.tracer || !ctx.hasProperties) return;
    const frame = ctx.properties.get(SPAN_FRAME);
    if (!frame) return;
    if (frame.parent) ctx.properties.set(SPAN_FRAME, frame.parent);
    else ctx.properties.delete(SPAN_FRAME);
    const span = frame.span;
    if (error !== undefined) {
      span.recordException(
        !this.includeErrorMessages
          ? { name: errorType(error) }
          : error instanceof Error
            ? error
            : { name: errorType(error), message: typeof error === 'string' ? error : '' },
      );
      span.setAttribute('exception.type', errorType(error));
      span.setStatus({ code: SpanStatusCode.ERROR, message: errorType(error) });
    }
    span.end();
  }

  private spanOf(ctx: ResilienceContext): Span | undefined {
    if (!this.tracer || !ctx.hasProperties) return undefined;
    return ctx.properties.get(SPAN_FRAME)?.span;
  }

  private readonly spanStart = (event: ResilienceEvent): SpanStart => {
    const attributes = this.pipelineSets.get(
      event.source,
      this.operationKeyOf(event.context),
      undefined,
      0,
      0,
      this.pipelineTags,
      event,
    );
    return {
      name: `resilience ${event.source.pipelineName ?? 'pipeline'}`,
      options: { kind: SpanKind.INTERNAL, attributes },
    };
  };

  private readonly pipelineTags = (event: ResilienceEvent): Attributes => {
    const attributes = this.pipelineAttributes(event);
    const outcome = (event.arguments as { outcome?: { ok: boolean; error?: unknown } }).outcome;
    if (outcome && !outcome.ok) attributes['exception.type'] = errorType(outcome.error);
    return attributes;
  };

  private readonly eventTags = (event: ResilienceEvent): Attributes => {
    const attributes = this.eventAttributes(event);
    const outcome = (event.arguments as { outcome?: { ok: boolean; error?: unknown } }).outcome;
    if (outcome && !outcome.ok) attributes['exception.type'] = errorType(outcome.error);
    return attributes;
  };

  private readonly attemptTags = (event: ResilienceEvent): Attributes => {
    const attributes = this.eventTags(event);
    const args = event.arguments as { attemptNumber: number; handled: boolean };
    attributes['attempt.number'] = args.attemptNumber;
    attributes['attempt.handled'] = args.handled;
    return attributes;
  };

  private pipelineAttributes(event: ResilienceEvent): Attributes {
    const attributes: Attributes = {};
    const { source, context } = event;
    if (source.pipelineName !== undefined) attributes['pipeline.name'] = source.pipelineName;
    if (source.pipelineInstanceName !== undefined) attributes['pipeline.instance'] = source.pipelineInstanceName;
    const operationKey = this.operationKeyOf(context);
    if (operationKey !== undefined) attributes['operation.key'] = operationKey;
    return attributes;
  }

  /**
   * The `operation.key` recorded for a call: its own key while fewer than `maxOperationKeys` distinct
   * ones were seen (and ever after for those), `OPERATION_KEY_OVERFLOW` for any new one beyond.
   */
  private operationKeyOf(context: ResilienceContext): string | undefined {
    const key = context.operationKey;
    if (key === undefined || this.operationKeys.has(key)) return key;
    if (this.operationKeys.size < this.maxOperationKeys) {
      this.operationKeys.add(key);
      return key;
    }
    if (!this.overflowed) {
      this.overflowed = true;
      // The key itself is not named: an unbounded key is likely to carry what must not be logged.
      this.logger.warn(
        `OpenTelemetryListener: more than ${this.maxOperationKeys} distinct operation keys (maxOperationKeys); ` +
          `further new keys are recorded as operation.key="${OPERATION_KEY_OVERFLOW}"`,
      );
    }
    return OPERATION_KEY_OVERFLOW;
  }

  private eventAttributes(event: ResilienceEvent): Attributes {
    const attributes = this.pipelineAttributes(event);
    attributes['strategy.name'] = event.source.strategyName ?? event.source.strategyType;
    attributes['event.name'] = event.eventName;
    attributes['event.severity'] = SEVERITY[event.severity];
    return attributes;
  }

  private async observeCircuits(result: BatchObservableResult, gauge: ObservableGauge): Promise<void> {
    for (const [value, attributes] of await this.circuitPoints()) result.observe(gauge, value, attributes);
  }

  private async circuitPoints(): Promise<[number, Attributes][]> {
    const all = await Promise.all([...this.registries].map((r) => r.circuits().catch(() => [])));
    const points: [number, Attributes][] = [];
    for (const circuit of all.flat()) {
      const attributes: Attributes = { 'pipeline.name': circuit.pipelineName, 'circuit.key': circuit.circuitKey };
      if (circuit.instanceKey !== undefined) attributes['pipeline.instance'] = circuit.instanceKey;
      if (circuit.strategyName !== undefined) attributes['strategy.name'] = circuit.strategyName;
      for (const state of CIRCUIT_STATES) {
        points.push([state === circuit.state ? 1 : 0, { ...attributes, 'circuit.state': state }]);
      }
    }
    return points;
  }

  /** The `producer` mode's collection: the local aggregates and the circuit gauge, as the SDK exports them. */
  private async produce(): Promise<{
    resourceMetrics: { resource: unknown; scopeMetrics: { scope: { name: string }; metrics: ProducedMetric[] }[] };
    errors: unknown[];
  }> {
    const now = systemTimeProvider.now();
    const metrics = this.local
      ? this.local.collect(
          {
            events: RESILIENCE_METRICS.strategyEvents,
            attempts: RESILIENCE_METRICS.attemptDuration,
            pipelines: RESILIENCE_METRICS.pipelineDuration,
          },
          now,
        )
      : [];
    if (this.local && this.registries.size > 0) {
      const points = await this.circuitPoints();
      const time: [number, number] = [Math.floor(now / 1000), (now % 1000) * 1e6];
      if (points.length) {
        metrics.push({
          descriptor: {
            name: RESILIENCE_METRICS.circuitState,
            description: "1 for each circuit's current state, 0 for its other states.",
            unit: '',
            valueType: ValueType.INT,
          },
          aggregationTemporality: 1,
          dataPointType: 2,
          dataPoints: points.map(([value, attributes]) => ({ startTime: time, endTime: time, attributes, value })),
        });
      }
    }
    return {
      resourceMetrics: { resource: {}, scopeMetrics: [{ scope: { name: this.scopeName }, metrics }] },
      errors: [],
    };
  }
}

/** What a span event adds to the metric tags: the figures of the event that have an attribute name. */
function eventAttributes(event: ResilienceEvent): Attributes {
  const attributes: Attributes = {};
  for (const fact of describeResilienceEvent(event.eventName, event.arguments)) {
    if (fact.attribute !== undefined) attributes[fact.attribute] = fact.value;
  }
  return attributes;
}
