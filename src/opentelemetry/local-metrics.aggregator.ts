import { ValueType, type Attributes, type HrTime } from '@opentelemetry/api';

/*
 * Two things the SDK does not do for the listener. `producer` mode hands the reader data that is already
 * aggregated (the `MetricProducer` contract: the SDK exports it as given, it does not aggregate it again),
 * so the counters and histograms live here. And the SDK keeps no state per attribute object — every
 * `record` sorts and serialises the tags again (`hashAttributes`) — so `SeriesCache` at least builds each
 * series' tags once, for the instruments mode and for spans.
 */

/** The SDK's default explicit bucket boundaries, in milliseconds. @internal */
export const DEFAULT_DURATION_BOUNDARIES: readonly number[] = [
  0, 5, 10, 25, 50, 75, 100, 250, 500, 750, 1_000, 2_500, 5_000, 7_500, 10_000,
];

/** Data shapes of `@opentelemetry/sdk-metrics` (`MetricProducer.collect()`), declared here so the API alone suffices. */
interface DataPoint<T> {
  readonly startTime: HrTime;
  readonly endTime: HrTime;
  readonly attributes: Attributes;
  readonly value: T;
}
interface HistogramValue {
  buckets: { boundaries: number[]; counts: number[] };
  sum: number;
  count: number;
  min: number;
  max: number;
}
/** A metric as `@opentelemetry/sdk-metrics` exports it. @internal */
export interface ProducedMetric {
  readonly descriptor: { name: string; description: string; unit: string; valueType: ValueType };
  /** `AggregationTemporality.CUMULATIVE`. */
  readonly aggregationTemporality: 1;
  /** `DataPointType`: 0 histogram, 2 gauge, 3 sum. */
  readonly dataPointType: 0 | 2 | 3;
  readonly dataPoints: DataPoint<number | HistogramValue>[];
  readonly isMonotonic?: boolean;
}

const CUMULATIVE = 1 as const;
const HISTOGRAM = 0 as const;
const SUM = 3 as const;

function hrTime(ms: number): HrTime {
  const seconds = Math.floor(ms / 1000);
  return [seconds, Math.round((ms - seconds * 1000) * 1e6)];
}

class CounterSeries {
  value = 0;
  constructor(readonly attributes: Attributes) {}
}

class HistogramSeries {
  readonly counts: number[];
  sum = 0;
  count = 0;
  min = Infinity;
  max = -Infinity;
  constructor(
    readonly attributes: Attributes,
    private readonly boundaries: readonly number[],
  ) {
    this.counts = new Array<number>(boundaries.length + 1).fill(0);
  }

  record(value: number): void {
    const b = this.boundaries;
    let i = 0;
    while (i < b.length && value > b[i]) i++; // buckets are (b[i-1], b[i]], as the SDK's
    this.counts[i]++;
    this.sum += value;
    this.count++;
    if (value < this.min) this.min = value;
    if (value > this.max) this.max = value;
  }
}

/** The series of one source, with the last one used (a hot loop hits the same series again and again). */
class SourceSeries<S> {
  private readonly byKey = new Map<string, S>();
  private last: S | undefined;

  /** Every series kept. */
  values(): IterableIterator<S> {
    return this.byKey.values();
  }

  private k1: unknown;
  private k2: unknown;
  private k3: unknown;
  private k4: unknown;

  /** The series kept for these keys (the last one used first, then the map), or `undefined`. */
  find(k1: unknown, k2: unknown, k3: unknown, k4: unknown): S | undefined {
    if (this.last !== undefined && this.k1 === k1 && this.k2 === k2 && this.k3 === k3 && this.k4 === k4) {
      return this.last;
    }
    const value = this.byKey.get(seriesKey(k1, k2, k3, k4));
    if (value !== undefined) this.remember(value, k1, k2, k3, k4);
    return value;
  }

  /** Keeps `value` as the series of these keys. */
  keep(value: S, k1: unknown, k2: unknown, k3: unknown, k4: unknown): S {
    this.byKey.set(seriesKey(k1, k2, k3, k4), value);
    this.remember(value, k1, k2, k3, k4);
    return value;
  }

  private remember(value: S, k1: unknown, k2: unknown, k3: unknown, k4: unknown): void {
    this.last = value;
    this.k1 = k1;
    this.k2 = k2;
    this.k3 = k3;
    this.k4 = k4;
  }
}

function seriesKey(k1: unknown, k2: unknown, k3: unknown, k4: unknown): string {
  return `${String(k1)}\u0000${String(k2)}\u0000${String(k3)}\u0000${String(k4)}`;
}

/**
 * The series of every source, remembering the source looked up last: a listener sees the events of one
 * kind (attempts, pipeline executions) come from the same few sources, so most lookups cost a comparison.
 */
class SeriesTable<S> {
  private readonly bySource = new Map<object, SourceSeries<S>>();
  private lastSource: object | undefined;
  private lastSeries: SourceSeries<S> | undefined;

  of(source: object): SourceSeries<S> {
    if (source === this.lastSource) return this.lastSeries!;
    let series = this.bySource.get(source);
    if (!series) this.bySource.set(source, (series = new SourceSeries<S>()));
    this.lastSource = source;
    this.lastSeries = series;
    return series;
  }

  /** Every series kept, of every source. */
  all(): S[] {
    return [...this.bySource.values()].flatMap((series) => [...series.values()]);
  }
}

/**
 * Values built once per series and reused: `get` returns the value of `source` told apart by up to four
 * keys, building it with `build(arg)` the first time. At most `limit` values are kept (unbounded
 * operation keys or error types must not grow memory); beyond it, `get` builds a fresh value each time.
 * The same lookup as `LocalMetrics` (the last series of each source first, then a map).
 *
 * @internal
 */
export class SeriesCache<V> {
  private readonly table = new SeriesTable<V>();
  private size = 0;

  constructor(private readonly limit = 2_000) {}

  get<A>(source: object, k1: unknown, k2: unknown, k3: unknown, k4: unknown, build: (arg: A) => V, arg: A): V {
    const series = this.table.of(source);
    const found = series.find(k1, k2, k3, k4);
    if (found !== undefined) return found;
    if (this.size >= this.limit) return build(arg);
    this.size++;
    return series.keep(build(arg), k1, k2, k3, k4);
  }
}

/**
 * Counters and explicit-bucket histograms kept in this process and handed to the SDK at collection time
 * (as a `MetricProducer`): a measurement costs a map lookup instead of the SDK's attribute hashing.
 * Series are keyed by the event's source object plus a short string, so the tags are built once per series.
 *
 * @internal
 */
export class LocalMetrics {
  private readonly counters = new SeriesTable<CounterSeries>();
  private readonly attempts = new SeriesTable<HistogramSeries>();
  private readonly pipelines = new SeriesTable<HistogramSeries>();
  private readonly newCounter = (a: Attributes) => new CounterSeries(a);
  private readonly newHistogram = (a: Attributes) => new HistogramSeries(a, this.boundaries);
  private readonly startTime: HrTime;
  private seriesCount = 0;

  constructor(
    private readonly boundaries: readonly number[] = DEFAULT_DURATION_BOUNDARIES,
    private readonly seriesLimit = 2_000,
    now = Date.now(),
  ) {
    this.startTime = hrTime(now);
  }

  /** Counts one event of `source`; the series is told apart by up to four values (name, severity, …). */
  count<A>(
    source: object,
    k1: unknown,
    k2: unknown,
    k3: unknown,
    k4: unknown,
    tags: (arg: A) => Attributes,
    arg: A,
  ): void {
    const series = this.series(this.counters, source, k1, k2, k3, k4, this.newCounter, tags, arg);
    if (series) series.value++;
  }

  attempt<A>(
    source: object,
    k1: unknown,
    k2: unknown,
    k3: unknown,
    k4: unknown,
    tags: (arg: A) => Attributes,
    arg: A,
    duration: number,
  ): void {
    this.series(this.attempts, source, k1, k2, k3, k4, this.newHistogram, tags, arg)?.record(duration);
  }

  pipeline<A>(source: object, k1: unknown, k2: unknown, tags: (arg: A) => Attributes, arg: A, duration: number): void {
    this.series(this.pipelines, source, k1, k2, undefined, undefined, this.newHistogram, tags, arg)?.record(duration);
  }

  collect(names: { events: string; attempts: string; pipelines: string }, now = Date.now()): ProducedMetric[] {
    const endTime = hrTime(now);
    const metrics: ProducedMetric[] = [];
    const counters = this.counters.all();
    if (counters.length) {
      metrics.push({
        descriptor: {
          name: names.events,
          description: 'Emitted upon the occurrence of a resilience event.',
          unit: '{event}',
          valueType: ValueType.INT,
        },
        aggregationTemporality: CUMULATIVE,
        dataPointType: SUM,
        isMonotonic: true,
        dataPoints: counters.map((s) => ({
          startTime: this.startTime,
          endTime,
          attributes: s.attributes,
          value: s.value,
        })),
      });
    }
    const histogram = (name: string, description: string, series: SeriesTable<HistogramSeries>): void => {
      const all = series.all();
      if (!all.length) return;
      metrics.push({
        descriptor: { name, description, unit: 'ms', valueType: ValueType.DOUBLE },
        aggregationTemporality: CUMULATIVE,
        dataPointType: HISTOGRAM,
        dataPoints: all.map((s) => ({
          startTime: this.startTime,
          endTime,
          attributes: s.attributes,
          value: {
            buckets: { boundaries: [...this.boundaries], counts: [...s.counts] },
            sum: s.sum,
            count: s.count,
            min: s.min,
            max: s.max,
          },
        })),
      });
    };
    histogram(
      names.attempts,
      'Tracks the duration of execution attempts, produced by Retry and Hedging resilience strategies.',
      this.attempts,
    );
    histogram(names.pipelines, 'Measures the duration of resilience pipelines.', this.pipelines);
    return metrics;
  }

  private series<S, A>(
    all: SeriesTable<S>,
    source: object,
    k1: unknown,
    k2: unknown,
    k3: unknown,
    k4: unknown,
    create: (attributes: Attributes) => S,
    tags: (arg: A) => Attributes,
    arg: A,
  ): S | undefined {
    const bySource = all.of(source);
    const found = bySource.find(k1, k2, k3, k4);
    if (found !== undefined) return found;
    // Unbounded operation keys or instance names must not grow memory without limit.
    if (this.seriesCount >= this.seriesLimit) return undefined;
    this.seriesCount++;
    return bySource.keep(create(tags(arg)), k1, k2, k3, k4);
  }
}
