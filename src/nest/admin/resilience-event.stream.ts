import type { CircuitState, ResilienceEvent, ResilienceEventMap, TelemetryListener } from '../../core/index.js';
import type { CircuitInfo } from '../../config/index.js';
import { errorType } from '../../core/internal.js';
import { summarizeEvent, type ResilienceEventSummary } from '../observability/telemetry-event.summary.js';

/** Where an event stream writes: an HTTP response, in practice. @internal */
export interface EventSink {
  /** Returns false when the sink's buffer is full (the caller waits for `drain`). */
  write(chunk: string): boolean;
  once(event: 'drain', listener: () => void): unknown;
  end(): void;
}

/** Options of the admin event stream: buffering, recent events and which events it streams. @publicApi */
export interface ResilienceEventStreamOptions {
  /** Events a client may have waiting before it is dropped as too slow. Default 256. */
  bufferSize?: number;
  /** Recent events kept for the dashboard. Default 100. */
  recentEvents?: number;
  /**
   * The events streamed. Default: every event except the per-call ones (`PipelineExecuting`,
   * `PipelineExecuted`, `ExecutionAttempt`), which feed the statistics instead.
   */
  events?: readonly (keyof ResilienceEventMap)[] | 'all';
  /** Wall clock in milliseconds. Default `Date.now`. */
  now?: () => number;
}

/** Call figures of one operation key of a pipeline over the last minute. @publicApi */
export interface OperationStatistics {
  /** The context's `operationKey` (`(other)` for keys beyond the first 20 of a pipeline, `(none)` without). */
  readonly operationKey: string;
  /** Executions per second over the window. */
  readonly callRate: number;
  /** Executions in the window. */
  readonly calls: number;
  /** Executions in the window that failed. */
  readonly failures: number;
  /** Calls refused by a circuit or a limiter. */
  readonly rejections: number;
  /** Over the last (up to 256) executions, in milliseconds. */
  readonly latency: { readonly p50: number; readonly p90: number; readonly p99: number } | undefined;
}

/** Call figures of one pipeline (or instance) over the last minute. @publicApi */
export interface PipelineStatistics {
  /** The pipeline's name. */
  readonly pipelineName: string;
  /** The pipeline instance's name (a registry key), when it has one. */
  readonly instanceName: string | undefined;
  /** Executions per second over the window. */
  readonly callRate: number;
  /** Executions in the window. */
  readonly calls: number;
  /** Executions in the window that failed. */
  readonly failures: number;
  /** Calls refused by a circuit or a limiter. */
  readonly rejections: number;
  /** Over the last (up to 1 024) executions, in milliseconds. */
  readonly latency: { readonly p50: number; readonly p90: number; readonly p99: number } | undefined;
  /** The window, in seconds. */
  readonly window: number;
  /** The same figures per operation key, busiest first (at most 20 keys per pipeline instance). */
  readonly operations: readonly OperationStatistics[];
  /** The last five minutes in steps of `step` seconds, oldest first (what the dashboard charts). */
  readonly series: StatisticsSeries;
}

/** Counts per step, oldest first; the last step is the one under way. @publicApi */
export interface StatisticsSeries {
  /** Seconds per step. */
  readonly step: number;
  /** Wall-clock milliseconds at the end of the last step. */
  readonly end: number;
  /** Executions per step. */
  readonly calls: readonly number[];
  /** Failed executions per step. */
  readonly failures: readonly number[];
  /** Refused calls per step. */
  readonly rejections: readonly number[];
}

/** A circuit's state from a moment on, as the dashboard charts it. @publicApi */
export interface CircuitStateChange {
  /** The state the circuit entered. */
  readonly state: CircuitState;
  /** Wall-clock milliseconds. */
  readonly at: number;
}

/** The last state changes of one circuit, oldest first (at most 20). @publicApi */
export interface CircuitStateHistory {
  /** The pipeline (or decorated method, `Class.method`) the breaker belongs to. */
  readonly pipelineName: string;
  /** The pipeline's instance key, when it has one. */
  readonly instanceKey: string | undefined;
  /** The breaker's `name` option, when set. */
  readonly strategyName: string | undefined;
  /** Its changes, oldest first. */
  readonly changes: readonly CircuitStateChange[];
}

const PER_CALL: ReadonlySet<string> = new Set(['PipelineExecuting', 'PipelineExecuted', 'ExecutionAttempt']);
const WINDOW_SECONDS = 60;
/** The series: five minutes in steps of five seconds. */
const SERIES_SECONDS = 300;
const SERIES_STEP = 5;
const LATENCY_SAMPLES = 1_024;
const OPERATION_LATENCY_SAMPLES = 256;
const MAX_OPERATIONS = 20;
const OPERATION_OVERFLOW = '(other)';
const NO_OPERATION = '(none)';
const HISTORY_CHANGES = 20;
const MAX_CIRCUITS = 500;
const REJECTION_ERRORS: ReadonlySet<string> = new Set([
  'BrokenCircuitError',
  'IsolatedCircuitError',
  'RateLimiterRejectedError',
]);
const STATE_OF_EVENT: Readonly<Record<string, CircuitState>> = {
  OnCircuitOpened: 'open',
  OnCircuitHalfOpened: 'half-open',
  OnCircuitClosed: 'closed',
};

type Kind = 0 | 1 | 2;

/** Calls, failures and rejections per second over the last `seconds`, and recent latencies. */
class CallWindow {
  private readonly stamps: Float64Array;
  private readonly counts: Uint32Array;
  private readonly latencies: Float64Array;
  private samples = 0;

  constructor(
    private readonly seconds: number,
    latencySamples: number,
  ) {
    this.stamps = new Float64Array(seconds).fill(-1);
    this.counts = new Uint32Array(seconds * 3);
    this.latencies = new Float64Array(latencySamples);
  }

  add(second: number, kind: Kind): void {
    const slot = second % this.seconds;
    if (this.stamps[slot] !== second) {
      this.stamps[slot] = second;
      this.counts.fill(0, slot * 3, slot * 3 + 3);
    }
    this.counts[slot * 3 + kind]++;
  }

  latency(duration: number): void {
    this.latencies[this.samples++ % this.latencies.length] = duration;
  }

  /** Counts of `second`, or zeros when that second is not (or no longer) kept. */
  private at(second: number, kind: Kind): number {
    const slot = second % this.seconds;
    return this.stamps[slot] === second ? this.counts[slot * 3 + kind] : 0;
  }

  /** The totals of the last `WINDOW_SECONDS` seconds up to `second`. */
  totals(second: number): [calls: number, failures: number, rejections: number] {
    const totals: [number, number, number] = [0, 0, 0];
    for (let s = second - WINDOW_SECONDS + 1; s <= second; s++) {
      for (let kind = 0; kind < 3; kind++) totals[kind] += this.at(s, kind as Kind);
    }
    return totals;
  }

  percentiles(): PipelineStatistics['latency'] {
    const n = Math.min(this.samples, this.latencies.length);
    if (n === 0) return undefined;
    const sorted = Array.from(this.latencies.subarray(0, n)).sort((a, b) => a - b);
    const at = (q: number) => round(sorted[Math.min(n - 1, Math.ceil(q * n) - 1)]);
    return { p50: at(0.5), p90: at(0.9), p99: at(0.99) };
  }

  series(second: number): StatisticsSeries {
    const steps = SERIES_SECONDS / SERIES_STEP;
    const lastStep = Math.floor(second / SERIES_STEP);
    const calls: number[] = [];
    const failures: number[] = [];
    const rejections: number[] = [];
    for (let step = lastStep - steps + 1; step <= lastStep; step++) {
      let c = 0;
      let f = 0;
      let r = 0;
      for (let s = step * SERIES_STEP; s < (step + 1) * SERIES_STEP; s++) {
        c += this.at(s, 0);
        f += this.at(s, 1);
        r += this.at(s, 2);
      }
      calls.push(c);
      failures.push(f);
      rejections.push(r);
    }
    return { step: SERIES_STEP, end: (lastStep + 1) * SERIES_STEP * 1000, calls, failures, rejections };
  }
}

/** One pipeline instance: its window and series, and a window per operation key. */
class Stats {
  private readonly window = new CallWindow(SERIES_SECONDS, LATENCY_SAMPLES);
  private readonly operations = new Map<string, CallWindow>();

  constructor(
    readonly pipelineName: string,
    readonly instanceName: string | undefined,
  ) {}

  add(second: number, kind: Kind, operationKey: string | undefined, duration?: number): void {
    this.window.add(second, kind);
    const operation = this.operation(operationKey);
    operation.add(second, kind);
    if (duration !== undefined) {
      this.window.latency(duration);
      operation.latency(duration);
    }
  }

  read(second: number): PipelineStatistics {
    const [calls, failures, rejections] = this.window.totals(second);
    const operations: OperationStatistics[] = [];
    for (const [operationKey, window] of this.operations) {
      const [c, f, r] = window.totals(second);
      if (c + f + r === 0) continue;
      operations.push({
        operationKey,
        callRate: round(c / WINDOW_SECONDS),
        calls: c,
        failures: f,
        rejections: r,
        latency: window.percentiles(),
      });
    }
    operations.sort((x, y) => y.calls + y.rejections - (x.calls + x.rejections));
    return {
      pipelineName: this.pipelineName,
      instanceName: this.instanceName,
      callRate: round(calls / WINDOW_SECONDS),
      calls,
      failures,
      rejections,
      latency: this.window.percentiles(),
      window: WINDOW_SECONDS,
      operations,
      series: this.window.series(second),
    };
  }

  private operation(operationKey: string | undefined): CallWindow {
    let key = operationKey ?? NO_OPERATION;
    let window = this.operations.get(key);
    if (window) return window;
    // Unbounded keys (an id in a key) are counted together rather than growing memory.
    if (this.operations.size >= MAX_OPERATIONS) key = OPERATION_OVERFLOW;
    window = this.operations.get(key);
    if (!window) this.operations.set(key, (window = new CallWindow(WINDOW_SECONDS, OPERATION_LATENCY_SAMPLES)));
    return window;
  }
}

function round(value: number): number {
  return Math.round(value * 100) / 100;
}

class Subscriber {
  private readonly queue: string[] = [];
  private scheduled = false;
  private waitingForDrain = false;
  closed = false;

  constructor(
    private readonly sink: EventSink,
    private readonly limit: number,
    private readonly onDrop: (subscriber: Subscriber) => void,
  ) {}

  push(chunk: string): void {
    if (this.closed) return;
    if (this.queue.length >= this.limit) {
      // Too slow: drop the client rather than buffer without bound or hold up a call.
      this.close();
      this.onDrop(this);
      return;
    }
    this.queue.push(chunk);
    if (!this.scheduled && !this.waitingForDrain) {
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.queue.length = 0;
    try {
      this.sink.end();
    } catch {
      // the connection is already gone
    }
  }

  private flush(): void {
    this.scheduled = false;
    if (this.closed) return;
    while (this.queue.length > 0) {
      const chunk = this.queue.shift()!;
      let ok: boolean;
      try {
        ok = this.sink.write(chunk);
      } catch {
        this.close();
        this.onDrop(this);
        return;
      }
      if (!ok) {
        this.waitingForDrain = true;
        this.sink.once('drain', () => {
          this.waitingForDrain = false;
          this.flush();
        });
        return;
      }
    }
  }
}

/**
 * A telemetry listener that feeds the admin API: it streams event summaries to subscribed clients
 * (server-sent events) through bounded buffers — a client that falls `bufferSize` events behind is
 * dropped, and a call never waits for a client — keeps the last events, and counts calls, failures,
 * rejections and latencies per pipeline over the last minute.
 *
 * @publicApi
 */
export class ResilienceEventStream implements TelemetryListener {
  private readonly subscribers = new Set<Subscriber>();
  private readonly recent: ResilienceEventSummary[] = [];
  private readonly stats = new Map<string, Stats>();
  private readonly history = new Map<
    string,
    {
      pipelineName: string;
      instanceKey: string | undefined;
      strategyName: string | undefined;
      changes: CircuitStateChange[];
    }
  >();
  private readonly bufferSize: number;
  private readonly recentLimit: number;
  private readonly streamed: ((name: string) => boolean) | undefined;
  private readonly now: () => number;
  private dropped = 0;

  constructor(options: ResilienceEventStreamOptions = {}) {
    this.bufferSize = options.bufferSize ?? 256;
    this.recentLimit = options.recentEvents ?? 100;
    this.now = options.now ?? Date.now;
    const events = options.events;
    if (events === 'all') this.streamed = undefined;
    else if (events) {
      const set = new Set<string>(events);
      this.streamed = (name) => set.has(name);
    } else this.streamed = (name) => !PER_CALL.has(name);
  }

  /** Clients connected now. */
  get subscriberCount(): number {
    return this.subscribers.size;
  }

  /** Clients dropped so far for falling behind. */
  get droppedCount(): number {
    return this.dropped;
  }

  /**
   * What `write` uses: `PipelineExecuted` and the rejections (the per-pipeline counts), the circuits'
   * state changes (their history) and the streamed events (`events`), never `PipelineExecuting`.
   */
  wants(eventName: ResilienceEvent['eventName']): boolean {
    if (eventName === 'PipelineExecuting') return false;
    if (eventName === 'PipelineExecuted' || eventName === 'OnRateLimiterRejected' || eventName === 'OnCircuitRejected')
      return true;
    if (STATE_OF_EVENT[eventName] !== undefined) return true; // the state history
    return !this.streamed || this.streamed(eventName);
  }

  write(event: ResilienceEvent): void {
    const name = event.eventName;
    if (name === 'PipelineExecuting') return;
    const now = this.now();
    if (name === 'PipelineExecuted') this.count(event, now);
    else if (name === 'OnRateLimiterRejected' || name === 'OnCircuitRejected')
      this.statsOf(event).add(Math.floor(now / 1000), 2, event.context.operationKey);
    else if (STATE_OF_EVENT[name] !== undefined) {
      const { pipelineName = 'pipeline', pipelineInstanceName, strategyName } = event.source;
      this.recordState(pipelineName, pipelineInstanceName, strategyName, STATE_OF_EVENT[name], now);
    }
    if (this.streamed && !this.streamed(name)) return;
    const summary = summarizeEvent(event, now);
    if (!PER_CALL.has(name)) {
      this.recent.push(summary);
      if (this.recent.length > this.recentLimit) this.recent.shift();
    }
    if (this.subscribers.size === 0) return;
    const chunk = `event: resilience\ndata: ${JSON.stringify(summary)}\n\n`;
    for (const subscriber of this.subscribers) subscriber.push(chunk);
  }

  /** Streams every following event to `sink` until it is closed; returns the function that unsubscribes. */
  subscribe(sink: EventSink): () => void {
    const subscriber = new Subscriber(sink, this.bufferSize, (s) => {
      this.subscribers.delete(s);
      this.dropped++;
    });
    this.subscribers.add(subscriber);
    return () => {
      this.subscribers.delete(subscriber);
      subscriber.close();
    };
  }

  /** Sends a comment line to every client (keeps proxies from closing idle connections). */
  heartbeat(): void {
    for (const subscriber of this.subscribers) subscriber.push(': keep-alive\n\n');
  }

  /** The last events, oldest first. */
  recentEvents(): ResilienceEventSummary[] {
    return [...this.recent];
  }

  /** Call figures per pipeline instance over the last minute. */
  statistics(): PipelineStatistics[] {
    const second = Math.floor(this.now() / 1000);
    return [...this.stats.values()].map((s) => s.read(second));
  }

  /** Disconnects every client. */
  close(): void {
    for (const subscriber of this.subscribers) subscriber.close();
    this.subscribers.clear();
  }

  /**
   * Records the states `circuits` are in (as `registry.circuits()` reads them, with when each changed),
   * for the state history: the dashboard's reads and the fleet's stats see isolations, closes by hand and
   * changes other instances made, which no event of this process reports.
   */
  observeCircuits(circuits: readonly CircuitInfo[]): void {
    const now = this.now();
    for (const c of circuits) {
      // A circuit that never changed state (closed since it was made) has no history to show yet.
      if (c.lastTransitionAt <= 0 && c.state === 'closed') continue;
      const at = c.lastTransitionAt > 0 && c.lastTransitionAt <= now ? c.lastTransitionAt : now;
      this.recordState(c.pipelineName, c.instanceKey, c.strategyName, c.state, at);
    }
  }

  /** The last state changes of each circuit seen (events and `observeCircuits`), oldest first. */
  stateHistory(): CircuitStateHistory[] {
    return [...this.history.values()].map((h) => ({ ...h, changes: [...h.changes] }));
  }

  private recordState(
    pipelineName: string,
    instanceKey: string | undefined,
    strategyName: string | undefined,
    state: CircuitState,
    at: number,
  ): void {
    const id = `${pipelineName}\u0000${instanceKey ?? ''}\u0000${strategyName ?? ''}`;
    let history = this.history.get(id);
    if (!history) {
      if (this.history.size >= MAX_CIRCUITS) this.history.delete(this.history.keys().next().value!);
      this.history.set(id, (history = { pipelineName, instanceKey, strategyName, changes: [] }));
    }
    const changes = history.changes;
    const last = changes[changes.length - 1];
    if (last?.state === state) return;
    // A read may report a change older than an event recorded since (`lastTransitionAt`): keep the order.
    changes.push({ state, at: last && at < last.at ? last.at : at });
    if (changes.length > HISTORY_CHANGES) changes.shift();
  }

  private count(event: ResilienceEvent & { eventName: 'PipelineExecuted' }, now: number): void {
    const stats = this.statsOf(event);
    const second = Math.floor(now / 1000);
    const { outcome, duration } = event.arguments;
    const operationKey = event.context.operationKey;
    stats.add(second, 0, operationKey, duration);
    // Rejections are counted where they happen (OnCircuitRejected, OnRateLimiterRejected), not as failures.
    if (!outcome.ok && !REJECTION_ERRORS.has(errorType(outcome.error))) stats.add(second, 1, operationKey);
  }

  private statsOf(event: ResilienceEvent): Stats {
    const { pipelineName = 'pipeline', pipelineInstanceName } = event.source;
    const id = pipelineInstanceName === undefined ? pipelineName : `${pipelineName}\u0000${pipelineInstanceName}`;
    let stats = this.stats.get(id);
    if (!stats) {
      if (this.stats.size >= 1_000) this.stats.clear(); // unbounded instance keys must not grow memory
      this.stats.set(id, (stats = new Stats(pipelineName, pipelineInstanceName)));
    }
    return stats;
  }
}
